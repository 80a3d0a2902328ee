"""What a newcomer tripped on in a fresh clone (issue: first hour, round 2): the report's width
off a terminal, `show` in a folder of several players, the model kinds, a failed start, game ids.
The runs here are played by the reference agents (no model) or fail to start: nothing is measured."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app

runner = CliRunner()
CLI = [sys.executable, "-m", "harness.cli"]


def invoke(*args, env=None):
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", **(env or {})})
    return result, result.stdout + (result.stderr if hasattr(result, "stderr") else "")


@pytest.fixture(scope="module")
def agents_run(tmp_path_factory) -> Path:
    """Two reference agents on two bank tasks under four conditions, in one folder."""
    out = tmp_path_factory.mktemp("agents") / "bank"
    result, text = invoke(
        "run",
        "--suite",
        "bank-disputes",
        "--model",
        "agent:gold,agent:reader",
        "--conditions",
        "raw,loc_obs,allowed_prose,allowed_json",
        "--tasks",
        "2",
        "--tool-mode",
        "prompt",
        "--out",
        out,
    )
    assert result.exit_code == 0, text
    return out


def _piped(args: list[str], columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_piped_report_is_80_columns_and_columns_is_respected(agents_run):
    piped = _piped(["report", str(agents_run)], None)  # stdout is a pipe: no terminal to ask
    assert max(len(line) for line in piped.splitlines()) <= 80
    wide = _piped(["report", str(agents_run)], "150")
    assert 80 < max(len(line) for line in wide.splitlines()) <= 150
    assert "(left out at 80 columns" in piped and "(left out at 150" not in wide


def test_show_asks_for_the_model_when_several_played(agents_run):
    result, text = invoke("show", agents_run, "--task", "bank-0000", "--condition", "allowed_json")
    assert result.exit_code == 2 and len(text.strip().splitlines()) == 1
    assert "agent:gold, agent:reader" in " ".join(text.split()) and "--model" in text
    result, text = invoke("show", agents_run, "--model", "agent:reader", "--condition", "allowed_json")
    assert result.exit_code == 0, text
    assert "model agent:reader" in text
    flat = " ".join(text.split())
    assert "narrow with --task / --condition / --model / --budget / --seed" in flat  # 2 tasks match
    result, text = invoke("show", agents_run, "--model", "agent:reader", "--seed", "7")
    assert result.exit_code == 2 and "--seed 7" in text and "recorded: 0" in text


def test_run_without_a_model_names_the_kinds_under_their_headings(tmp_path):
    result, text = invoke("run", "--suite", "bank-disputes", "--conditions", "raw", "--out", tmp_path / "r")
    flat = " ".join(text.split())
    assert result.exit_code == 2 and len(text.strip().splitlines()) == 1
    assert "embedded: local;" in flat and "GGUF files: gguf:PATH;" in flat
    assert "reference agents: agent:gold, agent:reader, agent:random" in flat
    presets = flat[flat.index("vLLM presets:") : flat.index("; reference agents")]
    assert "gguf" not in presets and "agent:" not in presets and "local" not in presets.split(": ", 1)[1].split(", ")
    result, text = invoke(
        "run", "--suite", "bank-disputes", "--conditions", "raw", "--model", "nosuch", "--out", tmp_path / "r"
    )
    assert result.exit_code == 2 and "'nosuch'" in text and "vLLM presets:" in text


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_run_that_never_started_leaves_no_run_folder(tmp_path):
    out = tmp_path / "runs" / "down"
    args = [
        "run",
        "--suite",
        "bank-disputes",
        "--model",
        "served-model",
        "--conditions",
        "raw",
        "--tasks",
        "1",
        "--endpoint",
        f"http://127.0.0.1:{_closed_port()}/v1",
        "--out",
        out,
    ]
    result, text = invoke(*args)
    assert result.exit_code == 3, text
    assert not (tmp_path / "runs").exists()  # no .lock, no transcripts/, not even the parent it made
    # the corrected command (here: the reference agent) starts a fresh run in the same place
    result, text = invoke(
        "run", "--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw", "--tasks", "1", "--out", out
    )
    assert result.exit_code == 0 and "1 episodes played, 0 already recorded" in " ".join(text.split()), text


def test_a_failed_start_keeps_what_was_there(tmp_path):
    """A resume whose server is down: the run folder, its records and lock file stay as they were."""
    from tests.harness.bank_script import GOLD, answer, customer_message
    from tests.scripted_server import ScriptedServer

    out = tmp_path / "kept"
    common = [
        "run",
        "--suite",
        "bank-disputes",
        "--model",
        "scripted-model",
        "--conditions",
        "raw,allowed_json",
        "--tasks",
        "1",
        "--tool-mode",
        "native",
        "--out",
        out,
    ]
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        result, text = invoke(*common, "--endpoint", server.url)
    assert result.exit_code == 0, text
    records = out / "records.jsonl"  # as a run killed after its first episode left it
    records.write_text(records.read_text().splitlines(keepends=True)[0])
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert Path(".lock") in before and Path("records.jsonl") in before
    result, text = invoke(*common, "--endpoint", f"http://127.0.0.1:{_closed_port()}/v1")
    assert result.exit_code == 3, text
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_games_show_refuses_an_id_that_is_not_a_paper_game():
    result, text = invoke("games", "show", "tw-1")
    flat = " ".join(text.split())
    assert result.exit_code == 2 and "Traceback" not in text
    assert "'tw-1' is not a game of paper-textworld" in flat and "tw-20261051 .. tw-20261100" in flat
