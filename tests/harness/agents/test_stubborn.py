"""`agent:stubborn` is the floor of repair under every condition: it sends its rejected call again,
whatever the feedback's wording, BFCL's own raw text (`bfcl-native`) included; in a fork the replay
tells it which call failed (issue 63: it read BFCL's text as no rejection and played on)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.contract import Decoding, ToolCall
from harness.agents.reader import feedback_of
from harness.agents.stubborn import StubbornAgent
from harness.types import ModelTurn
from tests.harness.cli.invoke import invoke

DATA = Path(__file__).parents[2] / "data" / "bfcl_results"
# every condition a fork of an import can play (the fault_* arms set the environment: refused there)
FORKABLE = "none,traceback,raw,loc_obs,allowed_prose,allowed_json,self_check,self_check_wait,bfcl-native"


def _after(reply: str) -> list[dict]:
    return [
        {"role": "user", "content": "find the goals"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "type": "function"}]},
        {"role": "tool", "content": reply},
    ]


def test_bfcls_own_failure_text_reads_as_a_rejection_and_a_tools_answer_does_not():
    assert feedback_of(_after("Error during execution: name 'true' is not defined"))[1]
    assert feedback_of(_after('{"error": "cd: temp: No such directory. You cannot use path to change directory."}'))[1]
    assert not feedback_of(_after('{"current_working_directory": "academic_venture"}'))[1]


class _Env:
    def reference(self) -> list[ToolCall]:
        return [ToolCall(name="cd", arguments={"folder": "document"}), ToolCall(name="ls", arguments={})]


def test_at_the_fork_point_it_sends_the_call_the_replay_says_failed_whatever_the_text():
    agent = StubbornAgent().for_episode(_Env())
    failed = ToolCall(name="cd", arguments={"folder": "temp"})
    other = ToolCall(name="ls", arguments={"a": True})
    turn = ModelTurn(text="", tool_calls=[other, failed])
    agent.observe([{"role": "user", "content": "go"}], [], Decoding(), turn, failed=1)
    # a reply that no reader of feedback would take for a rejection: the replay said which call failed
    for _ in range(3):
        sent = agent.decide(_after("cd: temp: nothing of the kind here"), [], agent.reference(), Decoding())
        assert sent == failed


@pytest.mark.extra("bfcl")
def test_a_fork_of_an_import_without_a_log_repairs_nothing_under_any_condition(tmp_path):
    # a published v3 file with no inference_log (tests/data/bfcl_results/README.md): replayed unverified
    result, text = invoke("import", "bfcl", DATA / "gpt-4o-2024-08-06-FC", "--out", tmp_path / "imp")
    assert result.exit_code == 0, text
    fork = tmp_path / "fork"
    result, text = invoke(
        "fork", tmp_path / "imp", "--model", "agent:stubborn", "--conditions", FORKABLE, "--budget", "3", "--out", fork
    )
    assert result.exit_code == 0, text
    rows = [json.loads(line) for line in (fork / "records.jsonl").read_text().splitlines()]
    assert {r["condition"] for r in rows} == set(FORKABLE.split(","))
    assert [r["condition"] for r in rows if r["repaired_next"] or r["calls_to_repair"] is not None] == []
