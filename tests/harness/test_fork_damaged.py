"""A fork of a damaged or edited source (issue 57): run.json without its spec or run id, a record
whose task id or condition was edited, transcript turns that are no turns. Each is one line (exit
2) or a fork point refused by name; none is a traceback, and none plays a conversation on a task
it was not recorded on."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.harness.cli.invoke import invoke


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fork") / "src"
    args = ("run", "--suite", "bank-disputes", "--tool-mode", "prompt", "--model", "agent:reader")
    result, text = invoke(*args, "--conditions", "none", "--tasks", "4", "--out", out)
    assert result.exit_code == 0, text
    return out


def _rows(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def _edit(src: Path, change: Callable[[dict, dict], None]) -> None:
    """`change(record, transcript)` on the first record and its transcript."""
    rows = _rows(src)
    path = src / rows[0]["transcript"]
    transcript = json.loads(path.read_text())
    change(rows[0], transcript)
    (src / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path.write_text(json.dumps(transcript))


@pytest.mark.parametrize("field", ["spec", "run_id"])
def test_run_json_without_its_spec_or_run_id_is_one_line(source, tmp_path, field):
    src = tmp_path / "src"
    shutil.copytree(source, src)
    meta = json.loads((src / "run.json").read_text())
    del meta[field]
    (src / "run.json").write_text(json.dumps(meta))
    result, text = invoke("fork", src, "--model", "agent:reader", "--conditions", "raw", "--out", tmp_path / "f")
    assert result.exit_code == 2 and f"run.json has no {field}" in text and "Traceback" not in text, text
    assert not (tmp_path / "f").exists()


def _task(record: dict, transcript: dict) -> None:
    record["task_id"] = "bank-0009"  # the transcript's key still names the task it was played on


def _condition(record: dict, transcript: dict) -> None:
    record["condition"] = transcript["key"]["condition"] = "allowed_json"  # not among its run's


def _no_turns(record: dict, transcript: dict) -> None:
    transcript["turns"] = [{} for _ in transcript["turns"]]


def _bad_answers(record: dict, transcript: dict) -> None:
    for turn in transcript["turns"]:
        turn["answer"] = {"tool_calls": 7}


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (_task, "the transcript is missing or does not match its record"),
        (_condition, "condition allowed_json is not among its run's conditions"),
        (_no_turns, "the transcript is missing or does not match its record"),
        (_bad_answers, "the transcript is missing or does not match its record"),
    ],
)
def test_an_edited_record_or_a_damaged_transcript_is_refused_never_played(source, tmp_path, change, said):
    src = tmp_path / "src"
    shutil.copytree(source, src)
    _edit(src, change)
    result, text = invoke("fork", src, "--model", "agent:reader", "--conditions", "raw", "--out", tmp_path / "f")
    assert result.exit_code == 0 and "Traceback" not in text, text
    assert f"1 fork point refused: {said}" in " ".join(text.split()), text
    forks = _rows(tmp_path / "f")
    assert forks and "bank-0009" not in {f["task_id"] for f in forks}  # never played on the edited task


def test_a_records_budget_edited_to_a_billion_is_refused_not_played_forever(source, tmp_path):
    """Issue 57: the fork's budget is what the record had left, so an edited budget of 10^9 made a
    fork that never ended; the record's key now must be its transcript's."""
    src = tmp_path / "src"
    shutil.copytree(source, src)
    rows = _rows(src)
    for r in rows:
        r["budget"] = 10**9
    (src / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result, text = invoke("fork", src, "--model", "agent:reader", "--conditions", "raw", "--out", tmp_path / "f")
    assert result.exit_code == 2 and "the transcript is missing or does not match its record" in text, text


def test_check_with_another_model_is_refused(source, tmp_path):
    """Issue 57: `fork --check --model X` reported X's rate as a reproduction rate."""
    result, text = invoke("fork", source, "--check", "--model", "agent:random", "--out", tmp_path / "f")
    assert result.exit_code == 2 and "--check replays each failure with its own model" in text, text
    assert not (tmp_path / "f").exists()


def _folder(records: Path) -> None:
    records.unlink(missing_ok=True)
    records.mkdir()


def _fifo(records: Path) -> None:
    records.unlink(missing_ok=True)
    os.mkfifo(records)  # opened, it would wait for a writer forever


@pytest.mark.parametrize("kind, make", [("a folder", _folder), ("a FIFO", _fifo)])
@pytest.mark.parametrize("where", ["fork's source", "fork --check's --out", "report"])
def test_a_records_file_that_is_a_folder_or_a_fifo_is_one_line(source, tmp_path, kind, make, where):
    """records.jsonl as a folder raised IsADirectoryError from the reader; as a FIFO it hung the
    reader and the opening of a fork's --out, which refused a folder only (issue 57)."""
    src, out = tmp_path / "src", tmp_path / "f"
    shutil.copytree(source, src)
    if where == "fork's source":
        make(src / "records.jsonl")
        args = ("fork", src, "--model", "agent:reader", "--conditions", "raw", "--out", out)
        bad = src / "records.jsonl"
    elif where == "fork --check's --out":
        out.mkdir()
        make(out / "records.jsonl")
        args, bad = ("fork", src, "--check", "--out", out), out / "records.jsonl"
    else:
        make(src / "records.jsonl")
        args, bad = ("report", src), src / "records.jsonl"
    result, text = invoke(*args)
    assert result.exit_code == 2 and "Traceback" not in text, text
    said = " ".join(text.split())
    # named by the reader (records file) or, for a fork's own --out, by the check of its folder (a file)
    assert f"{bad} is {kind} where the run keeps" in said and "move it away" in said, text
    assert bad.exists() and not bad.is_file()  # left as it was
    assert where == "fork --check's --out" or not out.exists()


def test_a_dry_run_refuses_an_out_whose_records_file_is_a_folder_as_the_fork_does(source, tmp_path):
    """Issue 57: `fork --dry-run` exited 0 where the fork itself refuses --out (its records.jsonl a
    folder); the dry run now says the same one line, exit 2."""
    out = tmp_path / "f"
    (out / "records.jsonl").mkdir(parents=True)
    args = ("fork", source, "--model", "agent:reader", "--conditions", "raw", "--out", out)
    said = f"{out}/records.jsonl is a folder where the run keeps a file: move it away"
    for extra in ((), ("--dry-run",)):
        result, text = invoke(*args, *extra)
        flat = " ".join(text.split())
        assert result.exit_code == 2 and said in flat and "Traceback" not in flat, (extra, text)


@pytest.mark.parametrize("field", ["sample_seeds", "models", "conditions"])
def test_a_run_json_without_its_grid_is_named_as_the_damaged_source(source, tmp_path, field):
    """Issue 57: a hand-made run.json without `sample_seeds` was told as the flags' fault
    ('flags: sample_seeds is empty'), not as the damaged source file."""
    src = tmp_path / "src"
    shutil.copytree(source, src)
    meta = json.loads((src / "run.json").read_text())
    del meta["spec"][field]
    (src / "run.json").write_text(json.dumps(meta))
    result, text = invoke("fork", src, "--model", "agent:reader", "--conditions", "raw", "--out", tmp_path / "f")
    flat = " ".join(text.split())
    assert result.exit_code == 2 and "Traceback" not in flat, text
    assert f"{src}/run.json has no spec.{field}: damaged; nothing forks from it" in flat, flat
    assert not (tmp_path / "f").exists()


def test_a_record_whose_budget_was_edited_to_text_is_named_as_report_names_it(source, tmp_path):
    """Issue 66: fork played a record whose budget was edited to "4", which report refuses."""
    src = tmp_path / "src"
    shutil.copytree(source, src)
    _edit(src, lambda record, _: record.update(budget="4"))
    said = "budget must be an integer, got '4'"
    for args in (("report", src), ("fork", src, "--model", "agent:reader", "--conditions", "raw")):
        result, text = invoke(*args, *(("--out", tmp_path / "f") if args[0] == "fork" else ()))
        assert result.exit_code == 2 and said in text and "Traceback" not in text, (args, text)
    assert not (tmp_path / "f").exists()
