"""A run directory under hostile conditions: a second process, echoed secrets, odd strings, failed
starts, damaged files, missing usage, a crashing episode. Nothing is lost, leaked or mis-scored."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.errors import StartFailed
from harness.rundir.store import RunDir, RunDirError
from harness.runner import run
from harness.spec import SpecError, build_spec
from tests.harness.bank_script import GOLD, answer, customer_message
from tests.scripted_server import Reply, ScriptedServer

SECRET = "sk-test-0123456789abcdef"


def spec_for(server_url: str, tmp_path: Path, **kw):
    values = {
        "suite": "bank-disputes",
        "models": ["scripted-model"],
        "endpoints": [server_url],
        "conditions": ["raw"],
        "tasks": 2,
        "out": str(tmp_path / "run"),
        "concurrency": 2,
        "tool_mode": "native",
        "max_retries": 0,
    }
    values.update(kw)
    return build_spec(values)


def records(spec) -> list[dict]:
    return [json.loads(line) for line in Path(spec.out, "records.jsonl").read_text().splitlines()]


def play(spec, **kw):
    return asyncio.run(run(spec, **kw))


def test_a_second_process_on_the_same_directory_is_refused_naming_the_holder(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from harness.rundir.store import RunDir; from harness.spec import build_spec;"
            "d = RunDir(sys.argv[1]); d.open(build_spec({'suite': 'bank-disputes', 'models': ['m'], 'endpoints': ['http://127.0.0.1:9/v1'],"
            "'conditions': ['raw'], 'out': sys.argv[1]})); print('locked', flush=True); time.sleep(30)",
            str(tmp_path / "run"),
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).parents[2],
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        spec = spec_for("http://127.0.0.1:9/v1", tmp_path)
        started = time.monotonic()
        with pytest.raises(RunDirError, match=f"in use by another run \\(pid {holder.pid}\\)"):
            play(spec)
        assert time.monotonic() - started < 5, "the second process must be refused at once"
    finally:
        holder.kill()
        holder.wait()
    # the kernel drops the lock of a killed holder: the directory is usable again
    store = RunDir(tmp_path / "run")
    store.open(spec)
    store.close()


def test_an_api_key_echoed_by_the_server_reaches_no_record_or_transcript(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    leak = {"error": {"message": f"invalid key: Bearer {SECRET}; Authorization: {SECRET}", "type": "auth"}}
    with ScriptedServer(lambda body: Reply(status=401, body=leak)) as server:
        spec = spec_for(server.url, tmp_path)
        play(spec)
    rows = records(spec)
    assert rows and all(r["harness_error"] and "401" in r["harness_error"] for r in rows)
    written = "".join(p.read_text() for p in Path(spec.out).rglob("*") if p.is_file() and p.name != ".lock")
    assert SECRET not in written and "[REDACTED]" in written


def test_a_lone_surrogate_in_an_answer_is_written_and_read_back(tmp_path):
    with ScriptedServer(lambda body: Reply(text="I think \ud800 maybe")) as server:
        spec = spec_for(server.url, tmp_path, tool_mode="prompt", budgets=[2])
        play(spec)
        play(spec)  # a resume reads the same directory back
    rows = records(spec)
    assert len(rows) == 2 and all(r["success"] is False and r["harness_error"] is None for r in rows)
    transcript = json.loads(Path(spec.out, rows[0]["transcript"]).read_text(encoding="utf-8"))
    assert transcript["turns"][0]["answer"]["text"] == "I think \ufffd maybe"


def test_a_failed_start_leaves_nothing_that_blocks_the_corrected_command(tmp_path):
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        wrong = spec_for(server.url, tmp_path, models=["no-such-model"])
        with pytest.raises(Exception, match="no-such-model"):
            play(wrong)
        assert not Path(wrong.out, "run.json").exists() and not Path(wrong.out, "records.jsonl").exists()
        right = spec_for(server.url, tmp_path)
        summary = play(right)
    assert summary.done == 2 and all(r["success"] for r in records(right))


def test_no_server_is_a_start_failure_not_a_traceback(tmp_path):
    spec = spec_for("http://127.0.0.1:9/v1", tmp_path)
    with pytest.raises(StartFailed):
        play(spec)
    assert not Path(spec.out, "run.json").exists()


@pytest.mark.parametrize(
    "field,value",
    [
        ("tasks", -1),
        ("tasks", 0),
        ("concurrency", 0),
        ("concurrency", -3),
        ("feedback_cut", -5),
        ("endpoints", ["not-a-url"]),
    ],
)
def test_bad_numbers_and_urls_are_refused(tmp_path, field, value):
    with pytest.raises(SpecError, match=field):
        spec_for("http://127.0.0.1:9/v1", tmp_path, **{field: value})


@pytest.mark.parametrize("decoding", [{"max_tokens": 0}, {"temperature": -1}, {"top_p": 0}])
def test_bad_decoding_is_refused(tmp_path, decoding):
    with pytest.raises(SpecError, match=next(iter(decoding))):
        spec_for("http://127.0.0.1:9/v1", tmp_path, decoding=decoding)


def test_out_is_a_file_or_records_are_damaged_in_the_middle(tmp_path):
    spec = spec_for("http://127.0.0.1:9/v1", tmp_path)
    Path(spec.out).write_text("not a directory")
    with pytest.raises(RunDirError, match="is a file"):
        play(spec)
    os.remove(spec.out)
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        good = spec_for(server.url, tmp_path)
        play(good)
    path = Path(good.out, "records.jsonl")
    lines = path.read_text().splitlines()
    damaged = "\n".join([lines[0][:40] + "#garbage", *lines[1:]]) + "\n"
    path.write_text(damaged)
    with pytest.raises(RunDirError, match="line 1 is not a record"):
        play(good)
    assert path.read_text() == damaged, "a damaged file is reported, never rewritten"


def test_missing_usage_is_unknown_not_zero(tmp_path):
    with ScriptedServer(
        lambda body: Reply(text=None, tool_calls=answer(GOLD[customer_message(body)], "native").tool_calls, usage=False)
    ) as server:
        spec = spec_for(server.url, tmp_path)
        play(spec)
    rows = records(spec)
    assert all(r["success"] and r["prompt_tokens"] is None and r["completion_tokens"] is None for r in rows)
    assert all(r["usage_missing"] == 1 and r["calls"][0]["prompt_tokens"] is None for r in rows)
    from results import build_report, load

    cell = build_report(load([spec.out])).cells[0]
    assert cell.usage_unknown == 2 and cell.tokens_per_success is None


def test_a_crashing_episode_stays_in_its_own_record(tmp_path, monkeypatch):
    """An environment that crashes on one task is that episode's harness error; the episodes
    running beside it on the same client finish normally and are scored."""
    import harness.spec
    from envs import get_suite

    class Crashing:
        def __init__(self, env):
            self.env = env

        def reset(self):
            return self.env.reset()

        def submit(self, action):
            raise RuntimeError("environment bug")

        def record_extra(self):
            return self.env.record_extra()

        def reference(self):
            return self.env.reference()

        def close(self):
            self.env.close()

    class Suite:
        def __init__(self, name):
            self.inner = get_suite(name)
            self.options_model = self.inner.options_model
            self.tasks = self.inner.tasks
            self.feedback_family = self.inner.feedback_family

        def make(self, task, options, ctx):
            env = self.inner.make(task, options, ctx)
            return Crashing(env) if task.task_id.endswith("0001") else env

    monkeypatch.setattr(harness.spec, "get_suite", Suite)
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        spec = spec_for(server.url, tmp_path, tasks=6, concurrency=3)
        summary = play(spec)
    rows = records(spec)
    crashed = [r for r in rows if r["harness_error"]]
    assert len(rows) == 6 and summary.done == 6
    assert [r["task_id"] for r in crashed] == ["bank-0001"] and "environment bug" in crashed[0]["harness_error"]
    assert crashed[0]["success"] is None and crashed[0]["model_calls"] == 1, "the call made before the crash is kept"
    assert all(r["success"] for r in rows if not r["harness_error"])


def test_a_200_carrying_an_error_keeps_the_servers_message(tmp_path):
    body = {"error": {"message": "model is overloaded, try later", "type": "server_error"}}
    with ScriptedServer(lambda b: Reply(status=200, body=body)) as server:
        spec = spec_for(server.url, tmp_path, tasks=1)
        play(spec)
    (row,) = records(spec)
    assert row["success"] is None and "model is overloaded, try later" in row["harness_error"]
