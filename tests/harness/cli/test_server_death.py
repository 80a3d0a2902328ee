"""The real embedded llama.cpp server, killed mid-run: the run stops with exit 3 and says why.

No mock of the server process: `repair-harness run --model local` starts llama-cpp-python's
server, the test waits for the first recorded episode and sends the server SIGILL (what a build
with instructions this CPU cannot run dies of), then reads what the CLI says and records.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.extra("local")]


def _cli(*args: str) -> subprocess.Popen:
    # SIGINT at its default, as a terminal's foreground job (see test_serve)
    return subprocess.Popen(
        [sys.executable, "-m", "harness.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _server_pid(cli: subprocess.Popen, timeout_s: float = 120) -> int:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = subprocess.run(
            ["pgrep", "-P", str(cli.pid), "-f", "harness.serving.llama.entry"], capture_output=True, text=True
        ).stdout.split()
        if found:
            return int(found[0])
        assert cli.poll() is None, cli.communicate()
        time.sleep(0.1)
    raise AssertionError("the CLI started no llama.cpp server")


def _wait_for(path: Path, cli: subprocess.Popen, timeout_s: float = 600) -> None:
    deadline = time.monotonic() + timeout_s
    while not (path.exists() and path.read_bytes().count(b"\n") >= 1):
        assert cli.poll() is None, cli.communicate()
        assert time.monotonic() < deadline, "no episode was recorded in time"
        time.sleep(0.2)


def test_run_local_killed_by_sigill_mid_run_exits_3_naming_the_signal_the_log_and_the_fix(tmp_path):
    out = tmp_path / "run"
    cli = _cli(
        "run",
        "--suite",
        "tools-travel",
        "--model",
        "local",
        "--conditions",
        "raw,allowed_json",
        "--tasks",
        "4",
        "--budget",
        "2",
        "--max-tokens",
        "24",
        "--concurrency",
        "1",
        "--out",
        str(out),
    )
    try:
        server = _server_pid(cli)
        _wait_for(out / "records.jsonl", cli)  # mid-run: an episode is recorded, others are still to play
        subprocess.run(["kill", "-ILL", str(server)], check=True)
        stdout, stderr = cli.communicate(timeout=180)
    finally:
        cli.kill()
    said = stderr
    assert cli.returncode == 3, said
    assert "Traceback" not in said and "Connection error" not in said
    assert re.search(
        r"stopped: the model server failed: the embedded llama\.cpp server \(pid \d+\) died during the "
        r"run after \d+ s: killed by SIGILL \(illegal instruction: this llama\.cpp build uses CPU "
        r"instructions this machine cannot run\)\.",
        said,
    ), said
    log = Path(re.search(r"its log: (\S+?)(;| \(empty\))", said).group(1))
    assert log.is_file() and log.stat().st_size > 0
    assert 'fix: install the portable llama.cpp build: CMAKE_ARGS="-DGGML_NATIVE=OFF"' in said
    assert "repair-harness doctor" in said and "--retry-errors" in said
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    killed = [r for r in records if r["harness_error"]]
    # the episode in flight is the harness's failure, never the agent's; the rest are still to play
    assert killed and all(r["success"] is None and "SIGILL" in r["harness_error"] for r in killed)
    assert len(records) < 8
    print(said)  # the message, for the closing note (pytest -s)


def test_serve_local_whose_server_is_killed_exits_3_saying_out_of_memory_is_likely():
    cli = _cli("serve", "local")
    try:
        while "ready" not in (line := cli.stdout.readline()):
            assert line, cli.communicate()
        server = _server_pid(cli)
        subprocess.run(["kill", "-KILL", str(server)], check=True)
        _, stderr = cli.communicate(timeout=60)
    finally:
        cli.kill()
    said = " ".join(stderr.split())
    assert cli.returncode == 3, said
    assert "died during the run" in said and "killed by SIGKILL (killed, often out of memory" in said
    assert "its log: " in said and "fix: " in said and "Traceback" not in said
