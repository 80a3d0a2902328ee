"""The report of a `protocol=bfcl` run says whose verdict its success is (bfcl evaluate's, its
force-quit rule included) and how many episodes that rule won where the harness's own would lose."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from results.protocols import force_quits_won
from tests.harness.cli.invoke import invoke

pytestmark = pytest.mark.extra("bfcl")


def test_the_force_quits_bfcls_rule_won_are_counted_under_its_protocol_only():
    df = pd.DataFrame({"extra.protocol": ["bfcl", "bfcl", "bfcl"], "extra.force_quit_won": [True, None, None]})
    assert force_quits_won(df) == 1
    assert force_quits_won(df.drop(columns="extra.force_quit_won")) == 0
    assert force_quits_won(df.assign(**{"extra.protocol": "plan"})) is None


def test_a_bfcl_protocol_runs_report_says_which_verdict_it_shows(tmp_path):
    out = tmp_path / "run"
    result, text = invoke(
        "run", "--suite", "bfcl-base", "--model", "agent:gold", "--conditions", "bfcl-native",
        "--env", "protocol=bfcl", "--task-ids", "base_4", "--no-suite-check", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, text
    assert "protocol bfcl: its prompting handler (--tool-mode prompt)" in " ".join(text.split())
    record = json.loads((out / "records.jsonl").read_text().splitlines()[0])
    assert record["budget"] == 168 and record["success"] is True
    result, text = invoke("report", out)
    assert result.exit_code == 0, text
    said = " ".join(text.split())
    assert "success is bfcl evaluate's verdict, its force-quit rule included: 0 episodes force-quit" in said
