"""The record's column names have one home: the record model, written to results/record_columns.json."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.types import EpisodeRecord, record_columns
from results.columns import CALL, KEY_FIELDS, C

ROOT = Path(__file__).resolve().parents[2]


def test_the_columns_file_is_the_record_model():
    written = json.loads((ROOT / "results" / "record_columns.json").read_text())
    assert written == record_columns(), "regenerate: python -m harness.types > results/record_columns.json"
    assert list(C) == list(EpisodeRecord.model_fields) and KEY_FIELDS == tuple(written["key"])


def test_a_name_the_record_lacks_fails_where_it_is_written():
    assert C.success == "success" and CALL.prompt_tokens == "prompt_tokens"
    with pytest.raises(AttributeError, match="the record has no field 'sucess'"):
        C.sucess  # noqa: B018


def test_no_module_of_results_or_show_spells_a_column_as_a_string():
    # `show` and harness.readers.transcripts, which picks and renders its episode, read records too
    # a record field written as a bare string where a column is indexed: it must be C.<name>
    # (run.json's `meta` and `spec`, and a transcript's messages `m` and answers `a`, are other
    # documents: their keys stay strings)
    names = set(record_columns()["record"])
    offenders = []
    shown = [ROOT / "harness" / "cli" / "show.py", ROOT / "harness" / "readers" / "transcripts.py"]
    for path in [*sorted((ROOT / "results").glob("*.py")), *shown]:
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if any(
                other in line
                for other in (
                    "meta[",
                    "meta.get(",
                    "spec[",
                    "spec.get(",
                    "transcript[",
                    "transcript.get(",
                    "m.get(",
                    "a.get(",
                )
            ):
                continue
            for name in names:
                for quoted in (f'["{name}"]', f"['{name}']", f'.get("{name}"'):
                    if quoted in line:
                        offenders.append(f"{path.name}:{no}: {quoted}")
    assert not offenders, offenders


def test_reading_columns_imports_no_harness():
    code = "import sys, results.columns; print(sorted(m for m in sys.modules if m.startswith('harness')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"
