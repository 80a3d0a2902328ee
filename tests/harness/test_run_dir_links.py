"""A run directory never follows a link planted in it, never takes a directory for its files, and
never adds to records whose spec is unknown (issue 49 items 8, 9, 14)."""

import json
import os

import pytest

from tests.harness.cli.invoke import invoke

RUN = ("run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "raw", "--tasks", "2")


@pytest.mark.parametrize("name", [".lock", "run.json", "records.jsonl", "run.tmp"])
def test_a_planted_link_is_never_written_through(tmp_path, name):
    out, victim = tmp_path / "r", tmp_path / "victim.txt"
    victim.write_text("precious")
    if name in ("run.json", "records.jsonl"):  # on a resume: the run exists, then the file is swapped
        assert invoke(*RUN, "--out", out)[0].exit_code == 0
        (out / name).unlink()
    else:
        out.mkdir()
    os.symlink(victim, out / name)
    result, text = invoke(*RUN, "--tasks", "3", "--out", out)
    assert victim.read_text() == "precious", text
    if name == "run.tmp":  # the name run.json is written under: the link is removed, never followed
        assert result.exit_code == 0 and not (out / name).is_symlink(), text
    else:
        assert result.exit_code == 2 and "symbolic link" in text and "Traceback" not in text


def test_a_directory_where_a_file_belongs_is_one_line(tmp_path):
    out = tmp_path / "r"
    (out / "records.jsonl").mkdir(parents=True)
    result, text = invoke(*RUN, "--out", out)
    assert result.exit_code == 2 and "is a folder where the run keeps a file" in text and "Traceback" not in text


def test_records_without_their_run_json_take_no_more_records(tmp_path):
    out = tmp_path / "r"
    assert invoke(*RUN, "--out", out)[0].exit_code == 0
    (out / "run.json").unlink()
    before = (out / "records.jsonl").read_bytes()
    result, text = invoke(
        "run", "--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw", "--out", out
    )
    assert result.exit_code == 2 and "no run.json" in " ".join(text.split())
    assert (out / "records.jsonl").read_bytes() == before


def test_show_never_opens_a_transcript_outside_the_run_directory(tmp_path):
    out, secret = tmp_path / "r", tmp_path / "secret.json"
    secret.write_text(json.dumps({"turns": [], "harness_error": "the secret"}))
    assert invoke(*RUN, "--out", out)[0].exit_code == 0
    lines = (out / "records.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines]
    rows[0]["transcript"] = "../secret.json"
    (out / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result, text = invoke("show", out, "--task", rows[0]["task_id"])
    assert result.exit_code == 2 and "the secret" not in text and "not in" in text


@pytest.mark.parametrize(
    "field, value",
    [
        ("run_id", 5),
        ("identity_hash", []),
        ("spec", "x"),
        ("sessions", {}),
        ("plugins", "x"),
        ("execution", 3),
        ("spec.conditions", "raw"),
        ("spec.budgets", ["4"]),
    ],
)
def test_a_wrong_typed_run_json_field_is_one_line_for_run_and_report_alike(tmp_path, field, value):
    out = tmp_path / "r"
    assert invoke(*RUN, "--out", out)[0].exit_code == 0
    meta = json.loads((out / "run.json").read_text())
    if field.startswith("spec."):
        meta["spec"][field[5:]] = value
    else:
        meta[field] = value
    (out / "run.json").write_text(json.dumps(meta))
    before = (out / "records.jsonl").read_bytes()
    for args in (RUN + ("--out", out), ("report", out), ("export", out, "--parquet", tmp_path / "x.parquet")):
        result, text = invoke(*args)
        flat = " ".join(text.split())
        assert result.exit_code == 2 and "run.json" in flat and "Traceback" not in text, (args[0], text)
    assert (out / "records.jsonl").read_bytes() == before


@pytest.mark.parametrize("field, value", [("budget", "4"), ("success", "false"), ("task_id", 7)])
def test_a_hand_edited_record_gets_one_verdict_from_run_and_report(tmp_path, field, value):
    out = tmp_path / "r"
    assert invoke(*RUN, "--out", out)[0].exit_code == 0
    lines = (out / "records.jsonl").read_text().splitlines()
    row = json.loads(lines[0])
    row[field] = value
    (out / "records.jsonl").write_text("\n".join([json.dumps(row), *lines[1:]]) + "\n")
    before = (out / "records.jsonl").read_bytes()
    for args in (RUN + ("--out", out), ("report", out)):
        result, text = invoke(*args)
        assert result.exit_code == 2 and f"{field} must be" in text and "Traceback" not in text, (args[0], text)
    assert (out / "records.jsonl").read_bytes() == before
