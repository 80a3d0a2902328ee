"""BFCL's execution writes its backend instances' names into a call's string literals (`ls(` in a
message becomes `<instance>.ls(`), and each release names them by its own rule: a text that embeds
one is the release's (issue 63: a v3 file replayed or forked on a newer rule diverged)."""

from __future__ import annotations

import pytest

from envs.bfcl import data
from envs.bfcl.calls import instance_name
from envs.contract import Accepted, ToolCall

MODEL, ENTRY = "org/Model-1.5:fc", "multi_turn_base_0"


@pytest.mark.parametrize(
    ("release", "name"),
    [
        ("2025.6.8", "org_Model_1_5:fc_multi_turn_base_0_gorillafilesystem_instance"),
        ("2025.8.6.2", "org_Model_1_5:fc_multi_turn_base_0_gorillafilesystem_instance"),
        ("2025.8.25", "org_Model_1_5:fc_multi_turn_base_0_GorillaFileSystem_instance"),
        ("2026.2.9", "org_Model_1_5:fc_multi_turn_base_0_GorillaFileSystem_instance"),
        ("2026.3.3", "org_Model_1_5_fc_multi_turn_base_0_GorillaFileSystem_instance"),
        ("2026.3.23", "org_Model_1_5_fc_multi_turn_base_0_GorillaFileSystem_instance"),
    ],
)
def test_each_release_names_an_instance_by_its_own_rule(release, name):
    assert instance_name(release, MODEL, ENTRY, "GorillaFileSystem") == name


@pytest.mark.extra("bfcl")
def test_the_installed_releases_rule_is_its_executors_own():
    """BFCL's own execution, asked to set up one instance, names it as the rule does."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    before = set(vars(multi_turn_utils))
    multi_turn_utils.execute_multi_turn_func_call([], {}, ["GorillaFileSystem"], MODEL, ENTRY)
    made = set(vars(multi_turn_utils)) - before
    for name in made:  # BFCL keeps it in its module's globals: dropped, as the env drops its own
        del vars(multi_turn_utils)[name]
    assert made == {instance_name(data.version(), MODEL, ENTRY, "GorillaFileSystem")}


@pytest.mark.extra("bfcl")
@pytest.mark.parametrize("release", ["2025.8.6.2", "2026.3.23"])
def test_bfcls_protocol_writes_the_name_of_the_release_it_plays_on(release, monkeypatch):
    from envs.bfcl.env import BfclEnv  # imports bfcl_eval: in the test
    from envs.bfcl.suite import Base

    monkeypatch.setattr(data, "version", lambda: release)
    suite = Base()
    task = next(t for t in suite.tasks(suite.options_model()) if t.params["entry_id"] == ENTRY)
    env = BfclEnv(task.model_copy(update={"params": {**task.params, "bfcl_model": MODEL}}), suite.category, "bfcl")
    env.reset()
    out = env.submit(ToolCall(name="echo", arguments={"content": "then ls(a) again"}))
    assert isinstance(out, Accepted)
    assert f"then {instance_name(release, MODEL, ENTRY, 'GorillaFileSystem')}.ls(a) again" in out.observation
