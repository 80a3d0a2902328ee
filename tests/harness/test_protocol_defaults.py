"""A protocol's own values for the run's fields the run leaves unset (harness.spec): under
`protocol=bfcl`, BFCL's sampling and bound, and the handler chosen explicitly."""

from __future__ import annotations

import pytest

from envs.bfcl import data
from harness.spec import SpecError, build_spec

pytestmark = pytest.mark.extra("bfcl")

BASE = {"suite": "bfcl-base", "conditions": ["bfcl-native"], "env_options": {"protocol": "bfcl"}}


def test_a_served_model_under_bfcls_protocol_must_choose_fc_or_prompting():
    with pytest.raises(SpecError, match="--tool-mode native.*--tool-mode prompt"):
        build_spec({**BASE, "models": ["some-model"], "endpoints": ["http://127.0.0.1:9/v1"]})


def test_bfcls_sampling_and_bound_unless_the_run_sets_them(tmp_path):
    spec = build_spec({**BASE, "models": ["agent:gold"], "out": str(tmp_path)})
    d = spec.decoding
    assert (d.temperature, d.top_p, d.max_tokens) == (data.TEMPERATURE, None, None)
    assert spec.budgets == [data.most_steps()] and data.most_steps() == 21 * 8
    own = build_spec({**BASE, "models": ["agent:gold"], "decoding": {"max_tokens": 64}, "budgets": [30]})
    assert (own.decoding.max_tokens, own.decoding.temperature, own.budgets) == (64, data.TEMPERATURE, [30])
    harness = build_spec({**BASE, "env_options": {}, "models": ["agent:gold"]})
    assert harness.decoding.max_tokens == 512 and harness.budgets == [24]


@pytest.mark.parametrize(("field", "value"), [("text_calls", "violation"), ("constrain", ["schema"])])
def test_what_bfcls_runner_has_no_such_thing_as_is_refused_not_ignored(field, value):
    with pytest.raises(SpecError, match=f"--{field.replace('_', '-')} does not apply under protocol=bfcl"):
        build_spec({**BASE, "models": ["agent:gold"], field: value})
    build_spec({**BASE, "models": ["agent:gold"], "constrain": ["none"]})


def test_a_fork_that_copies_its_sources_defaults_is_not_refused():
    build_spec({**BASE, "models": ["agent:gold"], "text_calls": "parse", "constrain": ["none"], "tool_mode": "prompt"})
