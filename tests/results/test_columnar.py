"""The columnar reader (results.columnar) gives the report's frame the per-record reader gives, and
declines what it cannot read as that reader does: the report of its frame is the same report, byte
for byte, and a damaged file gets the per-record reader's message."""

from __future__ import annotations

import importlib
import json
import random
from pathlib import Path

import pandas as pd
import pytest

from results import columnar, load, render_report
from results.errors import RecordsError
from results.report import report_columns
from tests.results import test_report_golden as golden

LOAD = importlib.import_module("results.load")


def _uniform(seed: int = 15) -> list[dict]:
    """The golden fixture's records, every one of today's layout."""
    out = []
    for rec in golden.records(seed):
        rec.setdefault("usage_missing", 0)
        rec.setdefault("prompt_words", 0)
        out.append(dict(sorted(rec.items())))
    return out


def _write(run: Path, records: list[dict], tail: str = "") -> Path:
    run.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records) + tail
    (run / "records.jsonl").write_text(text, encoding="utf-8")
    return run


def _per_record(monkeypatch: pytest.MonkeyPatch, runs: list[Path]) -> pd.DataFrame:
    def declined(*_: object) -> pd.DataFrame:
        raise columnar.NotColumnar("the per-record reader, for comparison")

    with monkeypatch.context() as m:
        m.setattr(LOAD, "_load_columnar", declined)
        return load(runs, columns=report_columns())


def test_the_columnar_frame_and_its_report_are_the_per_record_readers(tmp_path, monkeypatch):
    runs = [_write(tmp_path / "a", _uniform())]
    fast = LOAD._load_columnar(runs, report_columns())  # taken, not declined
    slow = _per_record(monkeypatch, runs)
    pd.testing.assert_frame_equal(fast, slow)
    assert fast.attrs == slow.attrs
    for asked in golden.REPORTS.values():
        assert render_report(fast, fmt="json", **asked) == render_report(slow, fmt="json", **asked)


def test_the_benchmarks_records_read_alike(tmp_path, monkeypatch):
    from benchmarks.report_scale import write_run

    write_run(tmp_path / "bench", 2000)
    runs = [tmp_path / "bench"]
    fast = LOAD._load_columnar(runs, report_columns())
    pd.testing.assert_frame_equal(fast, _per_record(monkeypatch, runs))


def test_two_runs_read_alike(tmp_path, monkeypatch):
    records = _uniform()
    half = len(records) // 2
    runs = [_write(tmp_path / "a", records[:half]), _write(tmp_path / "b", records[half:])]
    pd.testing.assert_frame_equal(LOAD._load_columnar(runs, report_columns()), _per_record(monkeypatch, runs))


def _damaged(records: list[dict], how: str) -> tuple[list[dict], str]:
    middle = len(records) // 2
    if how == "success missing":
        del records[middle]["success"]
    elif how == "key field empty":
        records[middle]["task_id"] = ""
    elif how == "budget a string":
        records[middle]["budget"] = "4"
    elif how == "recorded twice":
        records.append(next(r for r in records if r["success"] is not None))
    return records, ""


def _refused_alike(monkeypatch, run):
    """The columnar reader declines the run, and `load` refuses it with the per-record reader's message."""
    with pytest.raises(columnar.NotColumnar):
        LOAD._load_columnar([run], report_columns())
    with pytest.raises(RecordsError) as fast:
        load(run, columns=report_columns())
    with pytest.raises(RecordsError) as slow:
        _per_record(monkeypatch, [run])
    assert str(fast.value) == str(slow.value)


@pytest.mark.parametrize("how", ["success missing", "key field empty", "budget a string", "recorded twice"])
def test_a_damaged_file_gets_the_per_record_readers_message(tmp_path, monkeypatch, how):
    records, tail = _damaged(_uniform(), how)
    run = _write(tmp_path / "run", records, tail)
    _refused_alike(monkeypatch, run)


def test_two_records_on_one_line_are_refused_as_json(tmp_path):
    lines = [json.dumps(r, separators=(",", ":")) for r in _uniform()]
    lines[5] += lines.pop(6)
    run = tmp_path / "run"
    run.mkdir()
    (run / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RecordsError, match="not a JSON record"):
        load(run, columns=report_columns())


def _many() -> list[dict]:
    """Some 2,300 records: most lines are not among those the layout is learnt from."""
    out = []
    for seed in range(12):
        for rec in _uniform(seed):
            rec["task_id"] = f"s{seed}-{rec['task_id']}"
            out.append(rec)
    return out


@pytest.mark.parametrize("where", ["top", "condition_params"])
def test_a_column_some_records_have_is_left_to_the_per_record_reader(tmp_path, monkeypatch, where):
    records = _many()
    for rec in random.Random(3).sample(records[60:-60], 3):
        if where == "top":
            rec["progressed"] = True
        else:
            rec[where]["composition"] = "retry@prose"
    run = _write(tmp_path / "run", records)
    with pytest.raises(columnar.NotColumnar):
        LOAD._load_columnar([run], report_columns())
    pd.testing.assert_frame_equal(load(run, columns=report_columns()), _per_record(monkeypatch, [run]))


def test_a_field_the_report_does_not_read_changes_no_column(tmp_path, monkeypatch):
    records = _many()
    for rec in random.Random(3).sample(records[60:-60], 3):
        rec["extra"]["note"] = {"any": ["thing"]}
    run = _write(tmp_path / "run", records)
    pd.testing.assert_frame_equal(load(run, columns=report_columns()), _per_record(monkeypatch, [run]))


@pytest.mark.parametrize(
    ("field", "value"),
    [("task_id", ""), ("model", "m "), ("model", "m\tx"), ("suite", None), ("budget", "4"), ("sample_seed", True)],
)
def test_a_bad_key_off_the_sampled_lines_gets_the_per_record_readers_message(tmp_path, monkeypatch, field, value):
    """The key checks are one (results.rundir.key_error): the columnar reader asks them of every
    distinct value, the per-record reader of every record, so a bad key the layout's sample missed
    is refused as the per-record reader refuses it (a model "m " was read)."""
    records = _many()
    run = _write(tmp_path / "run", records)
    sampled = set(columnar.sample_lines(run / "records.jsonl"))
    lines = (run / "records.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i in range(len(lines) // 2, len(lines) - 1) if not sampled & set(lines[i - 1 : i + 2]))
    records[at][field] = value
    _write(run, records)
    assert not {ln for ln in columnar.sample_lines(run / "records.jsonl") if f'"{field}":{json.dumps(value)}' in ln}
    _refused_alike(monkeypatch, run)


def test_the_text_counts_are_exact_across_chunk_seams(tmp_path, monkeypatch):
    """_counts reads the file a chunk at a time: a pattern cut by a seam is counted once."""
    rng = random.Random(1)
    patterns = [b"\n", b'"success":null', b'"env":{}']
    pieces = [*patterns, b"x", b'"', b"null", b"{}"]
    for _ in range(200):
        text = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 300)))
        (tmp_path / "f").write_bytes(text)
        monkeypatch.setattr(columnar, "CHUNK", rng.randint(len(patterns[1]), 50))
        assert columnar._counts(tmp_path / "f", patterns) == [text.count(p) for p in patterns]
