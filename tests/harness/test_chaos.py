"""Chaos: a 100-episode run SIGKILLed at random moments and resumed loses and duplicates nothing.

The run is the real CLI in a child process (as a user would start it) against the scripted
server in this process; the kills land wherever they land (mid-request, mid-transcript,
mid-record), at moments drawn from a fixed seed.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.harness.bank_script import GOLD, answer, customer_message
from tests.scripted_server import ScriptedServer

ROOT = Path(__file__).parents[2]
KILLS = 10


def _command(url: str, out: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "harness.cli",
        "run",
        "--suite",
        "bank-disputes",
        "--model",
        "scripted-model",
        "--endpoint",
        url,
        "--conditions",
        "raw,allowed_json",
        "--no-preflight",  # the scripted server answers the suite's requests only
        "--tasks",
        "50",
        "--tool-mode",
        "native",
        "--concurrency",
        "2",
        "--out",
        str(out),
    ]


def _records(out: Path) -> list[dict]:
    path = out / "records.jsonl"
    if not path.exists():
        return []
    data = path.read_text(encoding="utf-8")
    complete = data[: data.rfind("\n") + 1]  # a killed writer may leave a cut last line; open() drops it
    return [json.loads(line) for line in complete.splitlines() if line.strip()]


def test_kill_and_resume_loses_and_duplicates_nothing(tmp_path):
    rng = random.Random(20261051)
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    # 500 ms per answer: 100 episodes at concurrency 2 play at least 25 s, longer than the ten kills
    # take (at most 20 s, start-ups included), however fast the client and its start-up become (at
    # 100 ms, a run of 5 s of play, only 6 of 10 kills landed once the client got faster)
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        original = server.responder

        def slow(body):
            time.sleep(0.5)
            return original(body)

        server.responder = slow
        kills, started = 0, time.monotonic()
        while kills < KILLS:
            proc = subprocess.Popen(
                _command(server.url, out), cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(rng.uniform(0.8, 2.0))
            if proc.poll() is not None:
                break  # finished before the kill: the remaining kills have nothing to hit
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            kills += 1
        final = subprocess.run(
            _command(server.url, out), cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
    assert final.returncode == 0, final.stderr[-2000:]
    assert kills == KILLS, f"only {kills} kills landed before the run finished; slow the server down"
    rows = _records(out)
    keys = [(r["task_id"], r["condition"]) for r in rows]
    assert len(keys) == len(set(keys)), "a key was recorded twice"
    assert len(rows) == 100, f"{100 - len(rows)} episodes lost"
    assert all(r["success"] is True and r["harness_error"] is None for r in rows)
    for r in rows:
        json.loads((out / r["transcript"]).read_text(encoding="utf-8"))
    assert time.monotonic() - started < 90
