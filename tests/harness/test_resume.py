"""A run killed with SIGKILL mid-way resumes with no record lost or duplicated."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from tests.harness.bank_script import GOLD, answer, customer_message
from tests.scripted_server import ScriptedServer


def cli(server, out, tasks):
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
        server.url,
        "--conditions",
        "raw,allowed_json",
        "--no-preflight",  # the scripted server answers the suite's requests only
        "--tasks",
        str(tasks),
        "--concurrency",
        "2",
        "--tool-mode",
        "native",
        "--out",
        str(out),
    ]


def keys(out):
    rows = [json.loads(line) for line in Path(out, "records.jsonl").read_text().splitlines()]
    return Counter((r["task_id"], r["condition"]) for r in rows)


def test_sigkill_then_resume_gives_exactly_one_record_per_key(tmp_path):
    def slow(body):
        reply = answer(GOLD[customer_message(body)], "native")
        reply.delay_s = 0.15
        return reply

    out = tmp_path / "run"
    with ScriptedServer(slow) as server:
        proc = subprocess.Popen(cli(server, out, tasks=12), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        records = out / "records.jsonl"
        deadline = time.time() + 120
        while time.time() < deadline and (not records.exists() or len(records.read_text().splitlines()) < 5):
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        before = keys(out)
        assert 5 <= sum(before.values()) < 24, "killed mid-way"
        done = subprocess.run(cli(server, out, tasks=12), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        assert f"{sum(before.values())} already recorded" in done.stderr.replace("\n", " ")
    after = keys(out)
    assert len(after) == 24 and set(after.values()) == {1}
    meta = json.loads((out / "run.json").read_text())
    assert len(meta["sessions"]) == 2


def test_cut_last_line_is_dropped_and_replayed(tmp_path):
    out = tmp_path / "run"
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        subprocess.run(cli(server, out, tasks=2), check=True, capture_output=True, timeout=300)
        records = out / "records.jsonl"
        lines = records.read_text().splitlines()
        records.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
        subprocess.run(cli(server, out, tasks=2), check=True, capture_output=True, timeout=300)
    after = keys(out)
    assert len(after) == 4 and set(after.values()) == {1}


def test_server_dying_mid_run_stops_the_run_and_resume_finishes_it(tmp_path):
    out = tmp_path / "run"

    def slow(body):
        reply = answer(GOLD[customer_message(body)], "native")
        reply.delay_s = 0.1
        return reply

    server = ScriptedServer(slow).__enter__()
    proc = subprocess.Popen(
        cli(server, out, tasks=15) + ["--concurrency", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    records = out / "records.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and (not records.exists() or len(records.read_text().splitlines()) < 3):
        time.sleep(0.05)
    server.__exit__(None, None, None)  # the server dies; nothing listens on its port any more
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 3, stderr
    assert "stopped" in stderr and "--retry-errors" in stderr
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    errors = [r for r in rows if r["harness_error"]]
    assert errors and all(r["success"] is None for r in errors)
    assert len(rows) < 30, "episodes not started were not recorded as anything"
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as again:
        done = subprocess.run(
            cli(again, out, tasks=15) + ["--retry-errors"], capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, done.stderr
    after = keys(out)
    assert len(after) == 30 and set(after.values()) == {1}
    rows = [json.loads(line) for line in records.read_text().splitlines()]
    assert all(r["success"] is True for r in rows)
    kept = [json.loads(line) for line in (out / "harness_errors.jsonl").read_text().splitlines()]
    assert len(kept) == len(errors), "the error records were moved aside, not lost"
