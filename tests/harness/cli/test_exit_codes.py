"""What `run` says and returns when it cannot start, ends with harness errors, or is stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from harness.cli import app
from tests.harness.bank_script import GOLD, answer, customer_message
from tests.scripted_server import Reply, ScriptedServer

ROOT = Path(__file__).parents[3]


class Ran:
    """A CLI result whose output is read with its line wrapping undone (the console is 80 wide)."""

    def __init__(self, result):
        self.exit_code, self.output = result.exit_code, " ".join(result.output.split())


def run_cli(*args: str) -> Ran:
    return Ran(CliRunner().invoke(app, ["run", *args]))


def test_no_server_at_the_start_is_one_line_and_exit_3(tmp_path):
    result = run_cli(
        "--suite",
        "bank-disputes",
        "--model",
        "m",
        "--endpoint",
        "http://127.0.0.1:9/v1",
        "--conditions",
        "raw",
        "--tasks",
        "1",
        "--out",
        str(tmp_path / "run"),
    )
    assert result.exit_code == 3, result.output
    assert "cannot start:" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run" / "run.json").exists()


def test_an_unauthorised_server_is_a_start_failure_naming_the_status(tmp_path):
    with ScriptedServer(lambda body: Reply(text="x")) as server:
        server.models_status = 401
        result = run_cli(
            "--suite",
            "bank-disputes",
            "--model",
            "scripted-model",
            "--endpoint",
            server.url,
            "--conditions",
            "raw",
            "--tasks",
            "1",
            "--out",
            str(tmp_path / "run"),
        )
    assert result.exit_code == 3 and "401" in result.output and "Traceback" not in result.output
    assert "OPENAI_API_KEY" in result.output and "--api-key-env" in result.output


def test_harness_errors_exit_4_and_a_resume_still_reports_them(tmp_path):
    out = str(tmp_path / "run")
    args = [
        "--suite",
        "bank-disputes",
        "--model",
        "scripted-model",
        "--conditions",
        "raw",
        "--tasks",
        "2",
        "--tool-mode",
        "native",
        "--out",
        out,
        "--no-preflight",  # the server's 503s must become harness errors, not stop the run at its start
    ]
    with ScriptedServer(lambda body: Reply(status=503)) as server:
        first = run_cli(*args, "--endpoint", server.url, "--concurrency", "1")
    assert first.exit_code == 4, first.output
    assert "2 episodes are recorded as harness errors" in first.output and "--retry-errors" in first.output
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        resumed = run_cli(*args, "--endpoint", server.url, "--concurrency", "1")
        assert resumed.exit_code == 4 and "2 earlier harness-error records kept" in resumed.output
        retried = run_cli(*args, "--endpoint", server.url, "--concurrency", "1", "--retry-errors")
    assert retried.exit_code == 0, retried.output
    assert "2 episodes played" in retried.output and "0 harness errors" in retried.output


def test_sigterm_stops_cleanly_and_says_how_to_resume(tmp_path):
    out = tmp_path / "run"

    def slow(body):
        time.sleep(0.2)
        return answer(GOLD[customer_message(body)], "native")

    with ScriptedServer(slow) as server:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "harness.cli",
                "run",
                "--suite",
                "bank-disputes",
                "--model",
                "scripted-model",
                "--endpoint",
                server.url,
                "--conditions",
                "raw",
                "--tasks",
                "40",
                "--tool-mode",
                "native",
                "--concurrency",
                "1",
                "--no-preflight",  # the scripted server answers the suite's requests only
                "--out",
                str(out),
            ],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.monotonic() + 60
        while not (out / "records.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 143, stderr[-2000:]
    recorded = (out / "records.jsonl").read_text().count("\n")
    said = " ".join(stderr.split())
    assert f"{recorded} episodes are recorded in {out}" in said
    assert "Rerun the same command to resume" in said and "Traceback" not in said
