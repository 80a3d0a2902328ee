"""`import bfcl --bfcl-version V`: the files are replayed on release V's backends and data, in a
worker process of its own, and run.json says which release; the installed release stays the
default, and an import its data does not reproduce names `--bfcl-version auto`. The release is a
stand-in (tests/harness/imports/standin.py) in the cache: no network."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.imports.releases import CACHE_ENV
from tests.harness.cli.invoke import invoke
from tests.harness.imports.standin import SENTENCE, standin

DATA = Path(__file__).parents[2] / "data" / "bfcl_results"
GPT = "openai_gpt-oss-20b--bfcl-base"
CHANGED = "One folder at a time, please."

pytestmark = pytest.mark.extra("bfcl")


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("releases")
    standin(root, "2099.1.1", CHANGED)
    return root


def _records(run: Path) -> dict[str, dict]:
    return {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}


def test_another_release_replays_the_file_on_its_own_backends(cache, tmp_path):
    gpt = DATA / "openai_gpt-oss-20b"
    result, text = invoke(
        "import", "bfcl", gpt, "--out", tmp_path, "--bfcl-version", "2099.1.1", env={CACHE_ENV: str(cache)}
    )
    assert result.exit_code == 0, text
    assert f"{tmp_path / GPT}: 5 records" in text  # the worker's lines, passed on
    replay = _records(tmp_path / GPT)["base_11"]["extra"]["replay"]
    # the stand-in's cd said its own sentence where the log has BFCL's
    assert replay["other_text"] == 1 and CHANGED in replay["divergence"]["here"]
    assert SENTENCE in replay["divergence"]["there"]
    session = json.loads((tmp_path / GPT / "run.json").read_text())["sessions"][0]
    assert session["imported"]["bfcl_eval"] == "2099.1.1"
    # what would help is said, once
    assert text.count("`--bfcl-version auto`") == 1 and "on bfcl-eval 2099.1.1, 0 entries" in text


def test_the_installed_release_is_the_default_and_plays_here(cache, tmp_path):
    gpt = DATA / "openai_gpt-oss-20b"
    result, text = invoke("import", "bfcl", gpt, "--out", tmp_path, env={CACHE_ENV: str(cache)})
    assert result.exit_code == 0, text
    replay = _records(tmp_path / GPT)["base_11"]["extra"]["replay"]
    assert replay["calls"] == replay["same_text"] and "--bfcl-version" not in text
    session = json.loads((tmp_path / GPT / "run.json").read_text())["sessions"][0]
    assert session["imported"]["bfcl_eval"] == "2026.3.23"
    # a resume on another release would pool two releases' records in one run directory: refused
    again, said = invoke(
        "import", "bfcl", gpt, "--out", tmp_path, "--bfcl-version", "2099.1.1", env={CACHE_ENV: str(cache)}
    )
    assert (
        again.exit_code == 2
        and "holds entries replayed on bfcl-eval 2026.3.23; this import replays on 2099.1.1" in said
    )
    assert len(said.strip().splitlines()) == 1, said
