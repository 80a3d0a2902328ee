"""What rounds 4 and 5 left (issue 66): a run.json whose sessions hold a wrong type, and a record
whose model name was edited, are named by every reader alike: one line, exit 2, nothing changed."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.harness.cli.invoke import invoke

RUN = ("run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "raw", "--tasks", "2")


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("sessions") / "r"
    assert invoke(*RUN, "--out", out)[0].exit_code == 0
    return out


@pytest.mark.parametrize(
    "field, value, says", [("concurrency", "4", "sessions.0.concurrency"), ("served", [1], "sessions.0.served")]
)
def test_a_session_field_of_the_wrong_type_is_one_line(played, tmp_path, field, value, says):
    run = tmp_path / "r"
    shutil.copytree(played, run)
    meta = json.loads((run / "run.json").read_text())
    meta["sessions"][0][field] = value
    (run / "run.json").write_text(json.dumps(meta))
    result, text = invoke("report", run)
    assert result.exit_code == 2 and "Traceback" not in text and says in text, text
    (error,) = [line for line in text.splitlines() if line.startswith("error:")]  # one line says it
    assert says in error and "damaged" in error, text


def test_a_model_name_edited_with_a_space_is_refused_by_run_and_report_alike(played, tmp_path):
    run = tmp_path / "r"
    shutil.copytree(played, run)
    lines = (run / "records.jsonl").read_text().splitlines(keepends=True)
    lines[0] = lines[0].replace('"model":"agent:reader"', '"model":"agent:reader "', 1)
    (run / "records.jsonl").write_text("".join(lines))
    before = (run / "records.jsonl").read_bytes()
    said = "model 'agent:reader ' has a leading or trailing space or a control character"
    for args in (("report", run), (*RUN, "--out", run)):
        result, text = invoke(*args)
        assert result.exit_code == 2 and said in " ".join(text.split()), (args, text)
    assert (run / "records.jsonl").read_bytes() == before  # `run` played nothing again
