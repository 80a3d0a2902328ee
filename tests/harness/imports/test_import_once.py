"""Each entry of an import is recorded once (issue 57): a file named several ways (`m/F m/F m
./m`), an entry id twice in one file, the same ids in a v3 and a v4 file of one model. Before,
each entry was recorded 2-4 times, exit 0, and `report` and every rerun refused the directory."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.harness.cli.invoke import invoke

GPT = Path(__file__).parents[2] / "data" / "bfcl_results" / "openai_gpt-oss-20b"
RESULT = "BFCL_v4_multi_turn_base_result.json"


def _ids(run: Path) -> list[str]:
    return [json.loads(line)["task_id"] for line in (run / "records.jsonl").read_text().splitlines()]


@pytest.mark.extra("bfcl")
def test_a_file_named_three_ways_is_imported_once(tmp_path, monkeypatch):
    model = tmp_path / "m"
    (model / "multi_turn").mkdir(parents=True)
    (model / "multi_turn" / RESULT).write_bytes((GPT / "multi_turn" / RESULT).read_bytes())
    monkeypatch.chdir(tmp_path)
    f = os.path.join("m", "multi_turn", RESULT)
    result, text = invoke("import", "bfcl", f, f, "m", "./m", "--out", tmp_path / "out")
    assert result.exit_code == 0, text
    ids = _ids(tmp_path / "out" / "m--bfcl-base")
    assert sorted(ids) == ["base_11", "base_17", "base_22", "base_30", "base_42"]
    assert invoke("report", tmp_path / "out")[0].exit_code == 0


@pytest.mark.extra("bfcl")
def test_an_id_given_twice_is_recorded_once_and_the_later_named(tmp_path):
    lines = (GPT / "multi_turn" / RESULT).read_text().splitlines(keepends=True)
    model = tmp_path / "m"
    model.mkdir()
    (model / RESULT).write_text("".join(lines + lines[:2]))  # two ids again at the end
    (model / RESULT.replace("v4", "v3")).write_text("".join(lines))  # and every id in a v3 file
    result, text = invoke("import", "bfcl", model, "--out", tmp_path / "out")
    assert result.exit_code == 0, text
    ids = _ids(tmp_path / "out" / "m--bfcl-base")
    assert len(ids) == len(set(ids)) == 5, ids
    said = " ".join(text.split())
    assert "7 entries skipped: an entry id given again (the first stands) (base_11" in said, text
    again, text = invoke("report", tmp_path / "out")
    assert again.exit_code == 0 and "an entry id given again" in " ".join(text.split()), text
    # a rerun adds nothing and refuses nothing
    result, text = invoke("import", "bfcl", model, "--out", tmp_path / "out")
    assert result.exit_code == 0 and "5 already there" in text, text


@pytest.mark.extra("bfcl")
def test_an_empty_result_file_leaves_no_run_directory(tmp_path):
    """Issue 57: an empty file made an empty run directory (run.json, a lock, no record)."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / RESULT).write_text("")
    result, text = invoke("import", "bfcl", tmp_path / "m", "--out", tmp_path / "out")
    assert result.exit_code == 0 and "no entries in its files: nothing written" in text, text
    assert not (tmp_path / "out" / "m--bfcl-base").exists()
