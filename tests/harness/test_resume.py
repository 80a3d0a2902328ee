"""A run killed with SIGKILL mid-way resumes with no record lost or duplicated."""

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from bank_script import GOLD, answer, customer_message
from scripted_server import ScriptedServer


def cli(server, out, tasks):
    return [sys.executable, "-m", "harness.cli", "run", "--suite", "bank-disputes", "--model", "scripted-model",
            "--endpoint", server.url, "--conditions", "raw,allowed_json", "--tasks", str(tasks), "--concurrency", "2",
            "--tool-mode", "native", "--out", str(out)]


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
