"""`repair-harness run` on the command line: a missing flag or model is one line naming what is
allowed, the run says how many episodes it plays, and a start that fails leaves no run folder or
keeps what was there. The runs here are played by the reference agents (no model), by the scripted
server, or fail to start: nothing is measured."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.harness.cli.invoke import invoke


@pytest.mark.parametrize(
    "missing, flag, allowed",
    [
        ("--conditions", "--conditions is required", "allowed_json"),
        ("--suite", "--suite is required", "bank-disputes"),
        ("--model", "--model is required", "local"),
    ],
)
def test_a_missing_flag_is_one_line_naming_what_is_allowed(tmp_path, missing, flag, allowed):
    args = {"--suite": "bank-disputes", "--conditions": "raw", "--model": "local"}
    del args[missing]
    result, text = invoke("run", *[x for kv in args.items() for x in kv], "--out", tmp_path / "r")
    assert result.exit_code == 2 and "Traceback" not in text
    assert len(text.strip().splitlines()) == 1 and flag in text and allowed in text
    assert "Field required" not in text and "{" not in text  # no pydantic dump of the flags


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
        "--no-preflight",  # the scripted server answers the suite's requests only
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


def test_run_says_how_many_episodes_and_estimates_the_rest(tmp_path):
    from tests.harness.bank_script import GOLD, answer, customer_message
    from tests.scripted_server import ScriptedServer

    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        result, text = invoke(
            "run",
            "--suite",
            "bank-disputes",
            "--model",
            "scripted-model",
            "--endpoint",
            server.url,
            "--conditions",
            "raw,allowed_json",
            "--tasks",
            "2",
            "--tool-mode",
            "native",
            "--concurrency",
            "1",
            "--no-preflight",  # the scripted server answers the suite's requests only
            "--out",
            tmp_path / "r",
        )
    flat = " ".join(text.split())
    assert result.exit_code == 0, text
    assert (
        "4 episodes to play, 1 at a time" in flat
        and "estimate: about" in flat
        and "for the models' 1 episode left" in flat
    )


def test_every_count_of_a_run_beside_reference_agents_says_whose_it_is(tmp_path):
    """A served model answering one request at a time beside agent:reader: the start line counts both
    and says what each plays at once; the estimate and the bar's ETA count the model's episodes
    only, and say so (the agents take no time). The bar is drawn once, at the end, off a terminal."""
    from tests.harness.bank_script import GOLD, answer, customer_message
    from tests.scripted_server import ScriptedServer

    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        result, text = invoke(
            "run", "--suite", "bank-disputes", "--model", "scripted-model,agent:reader", "--endpoint", server.url,
            "--conditions", "raw,allowed_json", "--tasks", "3", "--tool-mode", "native", "--concurrency", "1",
            "--no-preflight", "--out", tmp_path / "r",
        )  # fmt: skip
    flat = " ".join(text.split())
    assert result.exit_code == 0, text
    assert "12 episodes to play (6 of them reference agents', which take no time)" in flat
    assert "at a time: scripted-model 1, agent:reader 1" in flat  # --concurrency 1: every lane
    assert "estimate: about" in flat and "for the models' 3 episodes left, at the pace of their first 3" in flat
    assert "ETA -:--:--" not in flat and "12/12" in flat
