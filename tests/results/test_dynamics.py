"""Repair dynamics: the metrics' definitions on hand-made call logs, agent:stubborn as their own
test on every suite, and the report against tests/recompute_dynamics.py (records alone)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from results import load
from results.dynamics import _pass_k, episode_columns
from results.report import build_report

ROOT = Path(__file__).resolve().parents[2]


def call(outcome: str, signature: str = "s", repeats: bool = False, tokens: int | None = 10) -> dict:
    return {
        "outcome": outcome,
        "signature": signature,
        "repeats_rejected": repeats,
        "kind": "action",
        "prompt_tokens": tokens,
        "completion_tokens": 0 if tokens is not None else None,
    }


def test_a_retry_is_the_attempt_after_a_rejection_and_recovery_counts_attempts():
    calls = [
        call("accepted", "a"),
        call("missing", "b"),
        call("missing", "b", True),
        call("literal_error", "c"),
        call("won", "d"),
    ]
    got = episode_columns({"calls": calls, "config": {"decoding": {"temperature": 0.0}}})
    assert got["dyn.retries"] == 3 and got["dyn.identical_retries"] == 1
    assert got["dyn.first_rejection"] == 1 and got["dyn.recovered_after"] == 3
    assert got["dyn.rejections"] == 3 and got["dyn.schema_rejections"] == 3  # missing, literal_error
    assert got["dyn.overhead_tokens"] == 30 and got["dyn.greedy"] is True


def test_a_self_checks_first_call_is_no_attempt_and_unknown_usage_stays_unknown():
    calls = [call("review"), call("string_pattern_mismatch"), call("review", tokens=None), call("lost", "z")]
    got = episode_columns({"calls": calls})
    assert got["dyn.retries"] == 1 and got["dyn.recovered_after"] == 1  # a lost game is accepted
    assert got["dyn.schema_rejections"] == 0 and got["dyn.overhead_tokens"] is None and got["dyn.greedy"] is None


def test_a_last_call_rejection_counts_as_an_unrecovered_episode():
    got = episode_columns({"calls": [call("accepted"), call("unknown_tool")]})
    assert got["dyn.rejections"] == 1 and got["dyn.retries"] == 0 and got["dyn.recovered_after"] is None


def test_an_answer_in_text_after_a_rejection_is_a_give_up_never_a_recovery():
    """BFCL's protocol: an answer with no call ends the turn, which "after an error" counts as a
    give-up; recovery@k counts it the same way, and no later call recovers that rejection."""
    calls = [dict(call("backend_error", "a"), tools=["rm"]), dict(call("accepted", "t"), tools=[])]
    calls += [dict(call("accepted", "b"), tools=["ls"])]
    got = episode_columns({"calls": calls})
    assert got["dyn.recovered_after"] is None and got["dyn.next_text"] == 1
    repaired = [dict(call("backend_error", "a"), tools=["rm"]), dict(call("accepted", "b"), tools=["rm"])]
    assert episode_columns({"calls": repaired})["dyn.recovered_after"] == 1
    # a plan is text: a new plan accepted is a recovery
    plan = [dict(call("invalid_action", "a"), tools=[]), dict(call("won", "b"), tools=[])]
    assert episode_columns({"calls": plan, "extra": {"protocol": "plan"}})["dyn.recovered_after"] == 1


def test_a_forks_first_rejection_is_its_fork_point():
    """A fork starts at the source's rejected call: its first call accepted is a recovery at 1, as
    the repairs table's repaired next counts it, though no rejection is among the fork's own calls."""
    got = episode_columns({"fork": "p1", "calls": [dict(call("accepted", "b"), tools=["f"])]})
    assert got["dyn.first_rejection"] == -1 and got["dyn.recovered_after"] == 1 and got["dyn.rejections"] == 0
    again = episode_columns({"fork": "p1", "calls": [dict(call("missing", "a"), tools=["f"]), call("won", "b")]})
    assert again["dyn.recovered_after"] == 2
    assert episode_columns({"calls": [call("accepted")]})["dyn.first_rejection"] is None


def test_pass_k_is_tau_benchs_estimator():
    part = pd.DataFrame({"task_id": ["t"] * 3 + ["u"] * 3, "success": [True, True, False, True, True, True]})
    assert _pass_k(part, 1) == pytest.approx((2 / 3 + 1) / 2)
    assert _pass_k(part, 2) == pytest.approx((1 / 3 + 1) / 2)
    assert _pass_k(part, 3) == pytest.approx((0 + 1) / 2)


def run(out: Path, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", "--out", str(out), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("suite", ["tools-bank", "tools-calendar", "tools-travel", "bank-disputes", "paper-textworld"])
def test_stubborn_resubmits_every_time_and_never_recovers(suite, tmp_path):
    run(
        tmp_path / "r",
        "--suite",
        suite,
        "--model",
        "agent:stubborn,agent:gold",
        "--conditions",
        "raw,allowed_json",
        "--tasks",
        "6",
    )
    rows = build_report(load(tmp_path / "r")).dynamics
    stubborn = [r for r in rows if r.model == "agent:stubborn"]
    assert stubborn and all(r.retries > 0 and r.identical_resubmission == 1.0 for r in stubborn)
    assert all(v == 0.0 for r in stubborn for v in r.recovery_at.values())
    gold = [r for r in rows if r.model == "agent:gold"]
    # gold is never rejected: nothing to count is null, never 0
    assert gold and all(
        r.retries == 0
        and r.identical_resubmission is None
        and r.preventable_share is None
        and set(r.recovery_at.values()) == {None}
        for r in gold
    )


def test_the_report_agrees_with_a_recount_from_the_records_alone(tmp_path):
    out = tmp_path / "three"
    run(
        out,
        "--suite",
        "tools-travel",
        "--model",
        "agent:stubborn,agent:reader,agent:random",
        "--conditions",
        "raw,loc_obs,allowed_json",
        "--tasks",
        "8",
        "--seeds",
        "0,1,2",
        "--temperature",
        "0.7",
    )
    report = json.loads(
        subprocess.run(
            [sys.executable, "-m", "harness.cli", "report", str(out), "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    script = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "recompute_dynamics.py"), str(out)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    recount = {(r["condition"], r["model"]): r for r in map(json.loads, script.splitlines())}
    assert len(report["dynamics"]) == len(recount) == 9
    for row in report["dynamics"]:
        mine = recount[(row["condition"], row["model"])]
        assert row["retries"] == mine["retries"] and row["episodes_with_rejection"] == mine["episodes_with_rejection"]
        for ours, theirs in (
            (row["identical_resubmission"], mine["identical_resubmission"]),
            (row["recovery_at"]["1"], mine["recovery_at_1"]),
        ):
            assert (ours is None) == (theirs is None) and (ours is None or ours == pytest.approx(theirs, abs=1e-6))
        assert len(row["pass_k"]) == 3 and row["pass_k_flat"] is False  # sampling on: seeds differ
    assert any(r["identical_resubmission"] not in (None, 0.0, 1.0) for r in report["dynamics"])


def test_after_an_error_names_what_the_next_attempt_did():
    def c(outcome, signature, tools):
        return {**call(outcome, signature), "tools": tools}

    calls = [
        c("execution_error", "a", ["cd"]),  # then the same call: identical
        c("execution_error", "a", ["cd"]),  # then cd with other arguments
        c("execution_error", "b", ["cd"]),  # then another function
        c("backend_error", "c", ["ls", "mv"]),  # then text: gave up
        c("accepted", "t", []),
        c("unknown_tool", "d", ["nope"]),  # the last attempt: nothing came after
    ]
    got = episode_columns({"calls": calls})
    assert {k: got[f"dyn.next_{k}"] for k in ("identical", "same_function", "other_function", "text", "ended")} == {
        "identical": 1,
        "same_function": 1,
        "other_function": 1,
        "text": 1,
        "ended": 1,
    }
    # records from before the call log named its tools: unknown, never a count of 0
    assert episode_columns({"calls": [call("missing"), call("won")]})["dyn.next_text"] is None


def test_after_an_error_before_an_imports_divergence_the_next_attempt_is_the_divergent_answer():
    """Issue 63: an import whose replay diverged at an answer counts only the answers before it, and
    the rejection right before the divergence was labelled "ended" where the entry went on: the
    divergent answer is the model's own (only what it got back is not what it saw)."""

    def c(outcome, signature, tools):
        return {**call(outcome, signature), "tools": tools}

    calls = [
        c("accepted", "a", ["ls"]),
        c("backend_error", "b", ["cd"]),  # shown as logged; then the model sent cd again, otherwise
        c("backend_error", "c", ["cd"]),  # the divergence: another error text than the one logged
        c("backend_error", "c", ["cd"]),  # after it: not what the model saw, not counted
        c("accepted", "d", ["ls"]),
    ]
    diverged = {"calls": calls, "extra": {"replay": {"divergence": {"answer": 2, "call": 2}}}}
    got = episode_columns(diverged)
    assert got["dyn.rejections"] == 1 and got["dyn.next_same_function"] == 1 and got["dyn.next_ended"] == 0
    # a divergence at the last answer: nothing came after what the model was shown but that answer
    last = {"calls": calls[:3], "extra": {"replay": {"divergence": {"answer": 2, "call": 2}}}}
    assert episode_columns(last)["dyn.next_same_function"] == 1
    # an entry that ended at the rejection is still "ended"
    ended = {"calls": calls[:2], "extra": {"replay": {"divergence": None}}}
    assert episode_columns(ended)["dyn.next_ended"] == 1


def test_after_an_error_a_new_plan_is_the_repair_attempt_where_a_plan_is_the_action():
    """TextWorld's plan protocol: every answer is text, judged whole; a different plan after a rejected
    one is a new attempt, never "gave up in text". The form comes from the record (extra.action),
    or, before that field, from the protocol it names."""

    def plan(outcome, signature):
        return {**call(outcome, signature), "tools": []}

    calls = [
        plan("invalid_action", "p1"),
        plan("invalid_action", "p1"),
        plan("quest_incomplete", "p2"),
        plan("won", "p3"),
    ]
    for extra in ({"action": "plan", "protocol": "plan"}, {"protocol": "veriharness"}):
        got = episode_columns({"calls": calls, "extra": extra})
        assert got["dyn.action_form"] == "plan"
        assert (got["dyn.next_identical"], got["dyn.next_new_plan"], got["dyn.next_text"]) == (1, 2, 0)
    # the same call log in a suite of tool calls: text with no call is giving up
    assert episode_columns({"calls": calls})["dyn.next_text"] == 2


def test_the_after_error_table_shows_a_readers_repaired_plans_as_new_plans(tmp_path: Path) -> None:
    """agent:reader on paper-textworld repairs with its second plan under allowed_json: the table
    says so, and a class no plan has (another function, text) is unknown, not 0%."""
    from tests.harness.cli.invoke import invoke

    out = tmp_path / "tw"
    args = ["run", "--suite", "paper-textworld", "--model", "agent:reader", "--conditions", "allowed_json"]
    result, text = invoke(*args, "--tasks", "2", "--out", out)
    assert result.exit_code == 0, text
    (row,) = build_report(load([out])).model_dump()["dynamics"]
    assert row["after_error_counts"]["new_plan"] == row["after_error_n"] == 2
    assert row["after_error"]["new_plan"] == 1.0 and row["after_error"]["text"] is None
    assert row["after_error"]["other_function"] is None and row["after_error"]["identical"] == 0.0
