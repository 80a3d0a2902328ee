"""`import bfcl --bfcl-version auto`: each file is replayed on the release whose backends answer
as its log says, found by probing a sample of its entries on the candidates; the line says which
and how many were tried. The releases are stand-ins in the cache and pip reads no index: no network."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.imports.releases import CACHE_ENV
from tests.harness.cli.invoke import invoke
from tests.harness.imports.standin import SENTENCE, standin
from tests.harness.imports.test_releases import offline

DATA = Path(__file__).parents[2] / "data" / "bfcl_results"
GPT = "openai_gpt-oss-20b--bfcl-base"
THEIRS = "One folder at a time, please."

pytestmark = pytest.mark.extra("bfcl")


def test_auto_picks_the_release_whose_texts_match_the_log(tmp_path):
    cache = tmp_path / "cache"
    standin(cache, "2099.1.1", THEIRS)  # the release the file below was made with
    standin(cache, "2099.1.2", "Another sentence.")  # newer: tried first
    # the real file, as a release that says THEIRS would have logged it
    folder = tmp_path / "result" / "openai_gpt-oss-20b"
    shutil.copytree(DATA / "openai_gpt-oss-20b", folder)
    result_file = folder / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    text = result_file.read_text()
    assert SENTENCE in text
    result_file.write_text(text.replace(SENTENCE, THEIRS))

    env = {CACHE_ENV: str(cache), **offline(tmp_path)}
    result, said = invoke("import", "bfcl", folder, "--out", tmp_path / "out", "--bfcl-version", "auto", env=env)
    assert result.exit_code == 0, said
    assert "package index" not in said  # a release here reproduced the sample: the index is never read
    assert f"auto: {result_file}: bfcl-eval 2099.1.1 (" in said and "2 tried: 2099.1.2, 2099.1.1" in said
    assert "`--bfcl-version auto`" not in said  # no hint: auto chose
    run = tmp_path / "out" / GPT
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    replays = [r["extra"]["replay"] for r in records if r["success"] is not None]
    assert replays and all(r["calls"] == r["same_text"] for r in replays)
    assert json.loads((run / "run.json").read_text())["sessions"][0]["imported"]["bfcl_eval"] == "2099.1.1"


def test_auto_reads_the_index_once_no_release_here_reproduces_and_says_when_it_cannot(tmp_path):
    cache = tmp_path / "cache"
    standin(cache, "2099.1.2", "Another sentence.")  # of the file's series, but not its release
    folder = tmp_path / "result" / "openai_gpt-oss-20b"
    shutil.copytree(DATA / "openai_gpt-oss-20b", folder)
    result_file = folder / "multi_turn" / "BFCL_v4_multi_turn_base_result.json"
    result_file.write_text(result_file.read_text().replace(SENTENCE, THEIRS))  # no release says THEIRS

    env = {CACHE_ENV: str(cache), **offline(tmp_path)}
    result, said = invoke("import", "bfcl", folder, "--out", tmp_path / "out", "--bfcl-version", "auto", env=env)
    assert result.exit_code == 0, said
    # the releases here tried first (none reproduces), then the index asked for more: offline, no more
    assert "the package index cannot be read" in said and "tried: 2099.1.2" in said
    assert f"auto: {result_file}: no release tried reproduces its sample" in said
