"""`repair-harness games build|show`."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.cli.games import game_seed
from tests.harness.cli.invoke import invoke

runner = CliRunner()


def games(*args: str):
    return runner.invoke(app, ["games", *args])


@pytest.mark.slow
def test_build_paper_suite_writes_the_manifest(tmp_path) -> None:
    result = games("build", "--suite", "paper-textworld", "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert len(manifest["games"]) == 50 and manifest["suite"] == "paper-textworld"
    assert "tw-20261051" in result.output and "go east / take worm" in result.output


@pytest.mark.slow
def test_build_a_parametric_suite(tmp_path) -> None:
    args = [
        "build",
        "--suite",
        "textworld",
        "--seeds",
        "7",
        "--rooms",
        "4",
        "--objects",
        "5",
        "--quest-length",
        "4",
        "--cache-dir",
        str(tmp_path / "cache"),
        "--out",
        str(tmp_path),
    ]
    result = games(*args)
    assert result.exit_code == 0, result.output
    (game,) = json.loads((tmp_path / "manifest.json").read_text())["games"]
    assert game["options"] == {"rooms": 4, "objects": 5, "quest_length": 4} and game["seed"] == 7
    assert len(game["walkthrough"]) >= 3
    again = games(*args)
    assert again.exit_code == 0 and "0 generated, 1 from the cache" in again.output


@pytest.mark.slow
def test_bad_input_exits_2_without_a_traceback() -> None:
    for args, expect in (
        (["build", "--suite", "nope"], "allowed: paper-textworld, textworld"),
        (["build", "--suite", "paper-textworld", "--rooms", "5"], "fixed generation parameters"),
        (["build", "--suite", "textworld", "--seeds", "9..1"], "empty seed range"),
        (["show", "20261051", "--suite", "nope"], "unknown suite 'nope'"),
    ):
        result = games(*args)
        assert result.exit_code == 2, (args, result.output)
        assert expect in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_show_prints_the_opening() -> None:
    result = games("show", "20261051")
    assert result.exit_code == 0, result.output
    assert "tw-20261051" in result.output and "non-euclidean latchkey" in result.output
    step = games("show", "20261051", "--protocol", "step")
    assert step.exit_code == 0 and "tool go" in step.output


def test_games_show_takes_task_ids():
    assert game_seed("tw-20261051") == game_seed("20261051") == 20261051
    result, text = invoke("games", "show", "bank-0001")
    assert result.exit_code == 2 and "tw-20261051" in text


def test_games_show_refuses_an_id_that_is_not_a_paper_game():
    result, text = invoke("games", "show", "tw-1")
    flat = " ".join(text.split())
    assert result.exit_code == 2 and "Traceback" not in text
    assert "'tw-1' is not a game of paper-textworld" in flat and "tw-20261051 .. tw-20261100" in flat
