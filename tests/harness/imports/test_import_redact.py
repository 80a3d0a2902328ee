"""Issue 57's key sweep, for an import: a published result file whose model answers hold the key in
every form (whole, cut, lower-cased, normalised, base64, percent-encoded) as a call's argument and as
text; the import, a fork of it and both exports write none of them, nor print any."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.harness.test_redact import KEY, forms, leaked

GPT = Path(__file__).parents[2] / "data" / "bfcl_results" / "openai_gpt-oss-20b" / "multi_turn"
RESULT = "BFCL_v4_multi_turn_base_result.json"


@pytest.mark.extra("bfcl")
def test_the_key_in_every_form_reaches_no_file_and_no_console_of_an_import(tmp_path):
    echoed = " ".join(f"{name}={form}" for name, form in forms(KEY).items())
    entries = [json.loads(line) for line in (GPT / RESULT).read_text().splitlines()]
    first = entries[0]["result"][0]
    first[0] = [{"cd": json.dumps({"folder": f"{KEY} {echoed}"})}]  # the key as an argument
    first.insert(1, f"I will not share {KEY[:-3]} or {echoed}")  # and as the model's text
    model = tmp_path / "m"
    model.mkdir()
    (model / RESULT).write_text("".join(json.dumps(e) + "\n" for e in entries))
    env = {**os.environ, "OPENAI_API_KEY": KEY, "PYTHONPATH": str(Path(__file__).parents[3])}
    printed = []
    for args in (
        ["import", "bfcl", "m", "--out", "i"],
        ["fork", "i", "--model", "agent:reader", "--conditions", "raw", "--out", "f"],
        ["export", "i", "--parquet", "e.parquet", "--inspect", "insp"],
        ["export", "f", "--parquet", "fe.parquet", "--inspect", "finsp"],
        ["show", "i/m--bfcl-base", "--task", "base_11"],
        ["report", "i"],
        ["report", "f"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "harness.cli", *args], cwd=tmp_path, env=env, capture_output=True, text=True,
            timeout=300,
        )  # fmt: skip
        assert done.returncode in (0, 4), (args, done.stderr[-2000:])
        printed.append(done.stdout + done.stderr)
    assert (tmp_path / "e.parquet").is_file() and any((tmp_path / "insp").iterdir())
    assert len((tmp_path / "i" / "m--bfcl-base" / "records.jsonl").read_text().splitlines()) == len(entries)
    written = [p for p in tmp_path.rglob("*") if p.is_file() and p.parent != model]
    # the forms reached the records and were masked there, not dropped on the way (an entry skipped)
    transcripts = "".join(p.read_text() for p in (tmp_path / "i" / "m--bfcl-base" / "transcripts").iterdir())
    assert transcripts.count("[REDACTED]") >= len(forms(KEY)), transcripts.count("[REDACTED]")
    for path in written:
        assert not leaked(path.read_bytes().decode("utf-8", "replace")), path
    assert not leaked("\n".join(printed)), printed
