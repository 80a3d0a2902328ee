"""Runs loaded together pool into one report only where they played the same experiment (issue 49
item 5): two runs of one suite that differ beside their grid's axes, or one condition name that
means two feedbacks, are refused, naming what differs."""

import pytest

from results import load
from results.errors import RecordsError
from tests.harness.cli.invoke import invoke

RUN = ("run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "allowed_json", "--tasks", "3")


def test_runs_of_one_suite_with_another_feedback_cut_are_not_pooled(tmp_path):
    assert invoke(*RUN, "--out", tmp_path / "plain")[0].exit_code == 0
    assert invoke(*RUN, "--feedback-cut", "3", "--seeds", "1", "--out", tmp_path / "cut")[0].exit_code == 0
    with pytest.raises(RecordsError, match="different feedback_cut"):
        load([tmp_path / "plain", tmp_path / "cut"])
    result, text = invoke("report", tmp_path / "plain", tmp_path / "cut")
    assert result.exit_code != 0 and "feedback_cut" in text and "Traceback" not in text
    # each alone, and runs that differ only in the grid's axes, still load
    assert invoke(*RUN, "--seeds", "2", "--out", tmp_path / "other-seed")[0].exit_code == 0
    assert len(load([tmp_path / "plain", tmp_path / "other-seed"])) == 6


def test_one_condition_name_meaning_two_feedbacks_is_refused(tmp_path):
    import json

    assert invoke(*RUN, "--out", tmp_path / "a")[0].exit_code == 0
    assert invoke(*RUN, "--seeds", "1", "--out", tmp_path / "b")[0].exit_code == 0
    records = tmp_path / "b" / "records.jsonl"
    rows = [json.loads(x) for x in records.read_text().splitlines()]
    for r in rows:  # what a second plugin's `allowed_json` of its own would have recorded
        r["condition_params"]["composition"] = "retry+allowed@prose"
    records.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(RecordsError, match="'allowed_json' means different feedback"):
        load([tmp_path / "a", tmp_path / "b"])
