"""`--bfcl-version auto` reads each file through the import's own reader (issue 66): its sampler read
first, its own way: a FIFO named like a result file hung it, /dev/zero was a MemoryError, a 0xFF byte
a traceback, and a raw U+2028 in an entry was cut by `str.splitlines` into two lines that are no
JSON. One model's v3 and v4 files that reproduce on two releases were half imported, then refused;
a file no release reproduces passed with nothing said. No network: stand-in releases, no index."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.imports.releases import CACHE_ENV
from tests.harness.cli.invoke import invoke
from tests.harness.imports.standin import SENTENCE, standin
from tests.harness.imports.test_releases import offline

GPT = Path(__file__).parents[2] / "data" / "bfcl_results" / "openai_gpt-oss-20b" / "multi_turn"
RESULT = "BFCL_v4_multi_turn_base_result.json"
THEIRS = "One folder at a time, please."

pytestmark = pytest.mark.extra("bfcl")


def _auto(tmp_path: Path, folder: Path):
    env = {CACHE_ENV: str(tmp_path / "cache"), **offline(tmp_path)}
    return invoke("import", "bfcl", folder, "--out", tmp_path / "out", "--bfcl-version", "auto", env=env)


def _u2028(path: Path) -> None:
    entry = json.loads((GPT / RESULT).read_text().splitlines()[0])
    entry["note"] = "a\u2028b"  # valid JSON: U+2028 needs no escape
    path.write_text(json.dumps(entry, ensure_ascii=False) + "\n", encoding="utf-8")


BAD = {
    "fifo": (os.mkfifo, "is a FIFO, not a file"),
    "/dev/zero": (lambda p: p.symlink_to("/dev/zero"), "is a character device, not a file"),
    "0xff": (lambda p: p.write_bytes((GPT / RESULT).read_bytes().splitlines()[0] + b"\n\xff\n"), "line 2 is not UTF-8"),
    "unreadable": (lambda p: p.mkdir(), "is a folder, not a file"),  # root reads any file: a folder cannot be read
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_what_the_plain_import_refuses_auto_refuses_in_the_same_line(tmp_path, case):
    make, says = BAD[case]
    folder = tmp_path / "m"
    folder.mkdir()
    make(folder / RESULT)
    result, text = _auto(tmp_path, folder)
    assert result.exit_code == 2 and "Traceback" not in text, text
    assert f"error: {folder / RESULT}" in text and says in text, text
    assert not (tmp_path / "out").exists()


def test_an_entry_holding_u2028_is_sampled_whole(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    _u2028(folder / RESULT)
    result, text = _auto(tmp_path, folder)
    assert result.exit_code == 0 and "not JSON" not in text, text
    assert len((tmp_path / "out" / "m--bfcl-base" / "records.jsonl").read_text().splitlines()) == 1


def test_one_models_files_on_two_releases_are_refused_before_anything_is_imported(tmp_path):
    standin(tmp_path / "cache", "2025.6.8", THEIRS)  # a v3 release whose cd says THEIRS
    folder = tmp_path / "m"
    folder.mkdir()
    text = (GPT / RESULT).read_text()
    (folder / RESULT).write_text(text)  # reproduced by the installed release
    (folder / RESULT.replace("v4", "v3")).write_text(text.replace(SENTENCE, THEIRS))  # by 2025.6.8
    result, said = _auto(tmp_path, folder)
    assert result.exit_code == 2 and "Traceback" not in said, said
    assert "model m's base files reproduce on different releases" in " ".join(said.split())
    assert "2025.6.8" in said and "2026.3.23" in said
    assert not (tmp_path / "out").exists()  # nothing half imported


def test_a_file_no_release_reproduces_is_said(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / RESULT).write_text((GPT / RESULT).read_text().replace(SENTENCE, "Said by no release."))
    result, said = _auto(tmp_path, folder)
    assert result.exit_code == 0, said
    assert f"auto: {folder / RESULT}: no release tried reproduces its sample" in " ".join(said.split())
