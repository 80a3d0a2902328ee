"""The last resume edges: a disk that fills up while records are appended, `--retry-errors`
killed at any moment, a resume that grows the grid, credentials in an endpoint URL."""

from __future__ import annotations

import errno
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from harness.errors import StorageError
from harness.loop import EpisodeResult
from harness.recording import build_record
from harness.rundir.store import RunDir
from harness.spec import build_spec
from harness.types import EpisodeKey, EpisodeRecord
from tests.scripted_server import Reply, ScriptedServer


def run_cli(*args: str, limit_bytes: int | None = None, timeout: int = 300) -> subprocess.CompletedProcess:
    def limit() -> None:  # `ulimit -f`: a write past it fails with EFBIG, as on a full disk
        assert limit_bytes is not None  # the child runs it only when a limit is given
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    return subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        preexec_fn=limit if limit_bytes else None,
    )


def lines(path: Path) -> list[dict]:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), "a half-written last line"
    return [json.loads(line) for line in data.decode().splitlines()]


def key_counts(out: Path) -> Counter:
    return Counter(
        (r["task_id"], r["model"], r["condition"], r["budget"], r["sample_seed"]) for r in lines(out / "records.jsonl")
    )


GOLD = ("--suite", "tools-bank", "--model", "agent:gold,agent:reader", "--conditions", "raw,loc_obs,allowed_json")


def test_a_full_disk_stops_the_run_with_one_line_and_a_resume_loses_no_record(tmp_path):
    out = tmp_path / "run"
    full = run_cli(*GOLD, "--tasks", "40", "--out", str(out), limit_bytes=60_000)
    assert full.returncode == 1, full.stderr
    said = full.stderr.strip().splitlines()[-1]
    assert said.startswith("stopped: cannot write") and "records.jsonl" in said and "EFBIG" in said, full.stderr
    assert "Traceback" not in full.stderr
    before = key_counts(out)  # every line whole (`lines` checks), none twice
    assert 0 < sum(before.values()) < 240 and set(before.values()) == {1}
    again = run_cli(*GOLD, "--tasks", "40", "--out", str(out))
    assert again.returncode == 0, again.stderr
    after = key_counts(out)
    assert len(after) == 240 and set(after.values()) == {1} and set(before) <= set(after)


def _record(key: EpisodeKey) -> EpisodeRecord:
    return build_record(key, EpisodeResult(), run_id="r", condition_params={}, config={}, transcript="")


def test_an_append_that_fails_mid_line_leaves_the_file_ending_with_a_whole_record(tmp_path, monkeypatch):
    spec = build_spec({"suite": "tools-bank", "models": ["agent:gold"], "conditions": ["raw"], "out": str(tmp_path)})
    store = RunDir(tmp_path)
    store.open(spec)
    store.start_session({})

    def key(i: int) -> EpisodeKey:
        return EpisodeKey(
            suite="tools-bank", task_id=f"t{i}", model="agent:gold", condition="raw", budget=4, sample_seed=0
        )

    store.append(_record(key(0)))
    real = os.write
    calls = []

    def short_then_full(fd: int, data: bytes) -> int:
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, data[:10])  # the disk took 10 bytes of the line
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", short_then_full)
    with pytest.raises(StorageError, match=r"No space left on device \(ENOSPC\)"):
        store.append(_record(key(1)))
    monkeypatch.setattr(os, "write", real)
    with pytest.raises(StorageError):  # nothing more is tried
        store.append(_record(key(2)))
    store.close()
    assert [r["task_id"] for r in lines(tmp_path / "records.jsonl")] == ["t0"]


def _error_run(tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """A run whose every episode is a harness error (the server answered 500), and its config."""
    config = tmp_path / "grid.toml"
    config.write_text('max_retries = 0\nconcurrency = 2\ntool_mode = "native"\n')
    out = tmp_path / "run"
    args = [
        "--config",
        str(config),
        "--suite",
        "bank-disputes",
        "--model",
        "scripted-model",
        "--conditions",
        "raw,allowed_json",
        "--tasks",
        "10",
        "--out",
        str(out),
        "--no-preflight",  # the server's 500s must become harness errors, not stop the run at its start
    ]
    return config, out, args


def test_retry_errors_killed_at_any_moment_loses_and_duplicates_nothing(tmp_path):
    from tests.harness.bank_script import GOLD as ANSWERS
    from tests.harness.bank_script import answer, customer_message

    _, out, args = _error_run(tmp_path)
    with ScriptedServer(lambda body: Reply(status=500)) as server:
        first = run_cli(*args, "--endpoint", server.url)
    assert first.returncode == 4, first.stderr
    assert sum(1 for r in lines(out / "records.jsonl") if r["harness_error"]) == 20

    def slow(body):
        reply = answer(ANSWERS[customer_message(body)], "native")
        reply.delay_s = 0.05
        return reply

    rng = random.Random(30)
    with ScriptedServer(slow) as server:
        cmd = [sys.executable, "-m", "harness.cli", "run", *args, "--endpoint", server.url, "--retry-errors"]
        for _ in range(8):
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.3, 2.5))
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            counts = key_counts(out)
            # killed after the move and before the first replayed record, the file is empty: nothing is
            # lost (the errors are in harness_errors.jsonl, the resume replays them), nothing is twice
            assert len(counts) == 20 or sum(counts.values()) <= 20 and set(counts.values()) <= {1}
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    rows = lines(out / "records.jsonl")
    assert len(rows) == 20 and len(key_counts(out)) == 20 and not any(r["harness_error"] for r in rows)
    moved = (out / "harness_errors.jsonl").read_text().splitlines()
    assert len(moved) == len(set(moved)) and len(moved) >= 20
    # each first-run error is kept once: the 20 from the 500s, under one move
    assert len(
        {(json.loads(m)["task_id"], json.loads(m)["condition"], json.loads(m)["moved_by"]) for m in moved}
    ) == len(moved)
    assert "moving_errors" not in json.loads((out / "run.json").read_text())


def test_a_move_killed_between_its_steps_is_redone_without_a_second_copy(tmp_path, monkeypatch):
    from harness.rundir import store as store_module

    _, out, args = _error_run(tmp_path)
    with ScriptedServer(lambda body: Reply(status=500)) as server:
        assert run_cli(*args, "--endpoint", server.url).returncode == 4
    spec = build_spec(
        {
            "suite": "bank-disputes",
            "models": ["scripted-model"],
            "conditions": ["raw", "allowed_json"],
            "tasks": 10,
            "tool_mode": "native",
            "out": str(out),
            "endpoints": ["http://127.0.0.1:9/v1"],
        }
    )
    real = store_module.replace_file

    def killed_after_the_errors_file(path: Path, data: bytes, **kw: bool) -> None:
        real(path, data, **kw)
        if path.name == "harness_errors.jsonl":
            raise KeyboardInterrupt  # the process dies here: records.jsonl still holds the errors

    monkeypatch.setattr(store_module, "replace_file", killed_after_the_errors_file)
    first = RunDir(out)
    first.open(spec)
    with pytest.raises(KeyboardInterrupt):
        first.start_session({}, retry_errors=True)
    first.close()
    monkeypatch.setattr(store_module, "replace_file", real)
    assert len((out / "harness_errors.jsonl").read_text().splitlines()) == 20
    assert sum(1 for r in lines(out / "records.jsonl") if r["harness_error"]) == 20
    again = RunDir(out)
    again.open(spec)
    again.start_session({}, retry_errors=True)
    again.close()
    assert len((out / "harness_errors.jsonl").read_text().splitlines()) == 20  # not 40
    assert lines(out / "records.jsonl") == []


def test_a_resume_may_grow_the_grid_and_plays_only_the_new_episodes(tmp_path):
    out = tmp_path / "run"
    base = ("--suite", "tools-travel", "--model", "agent:gold", "--out", str(out))
    assert run_cli(*base, "--conditions", "raw", "--tasks", "2").returncode == 0
    grown = run_cli(*base, "--conditions", "raw,allowed_json", "--tasks", "4", "--model", "agent:gold,agent:reader")
    assert grown.returncode == 0, grown.stderr
    assert "2 already recorded" in grown.stderr.replace("\n", " ")
    counts = key_counts(out)
    assert len(counts) == 16 and set(counts.values()) == {1}
    meta = json.loads((out / "run.json").read_text())
    assert meta["spec"]["tasks"] == 4 and meta["spec"]["conditions"] == ["raw", "allowed_json"]
    assert meta["sessions"][-1]["grid_extended"]["tasks"] == {"from": 2, "to": 4}
    for change, field in ((("--tasks", "3"), "tasks"), (("--temperature", "0.7"), "decoding")):
        refused = run_cli(
            *base,
            "--conditions",
            "raw,allowed_json",
            "--model",
            "agent:gold,agent:reader",
            *(("--tasks", "4") if field != "tasks" else ()),
            *change,
        )
        assert refused.returncode == 2 and f"(different: {field})" in refused.stderr, refused.stderr
    assert key_counts(out) == counts


def test_credentials_in_an_endpoint_url_are_refused_and_never_printed(tmp_path):
    out = tmp_path / "run"
    said = run_cli(
        "--suite",
        "bank-disputes",
        "--model",
        "m",
        "--conditions",
        "raw",
        "--out",
        str(out),
        "--endpoint",
        "http://user:hunter2-secret@127.0.0.1:9/v1",
    )
    assert said.returncode == 2 and "--api-key-env" in said.stderr and "Traceback" not in said.stderr
    assert "hunter2" not in said.stderr + said.stdout and not out.exists()
    config = tmp_path / "grid.toml"
    config.write_text('endpoints = ["https://me:hunter2-secret@models.example/v1"]\n')
    said = run_cli(
        "--config", str(config), "--suite", "bank-disputes", "--model", "m", "--conditions", "raw", "--out", str(out)
    )
    assert said.returncode == 2 and "hunter2" not in said.stderr + said.stdout and not out.exists()


def test_records_whose_transcripts_a_crash_emptied_or_lost_are_played_again_once(tmp_path):
    """What a power cut leaves when records.jsonl reached the disk and some transcripts did not."""
    import json as _json

    from tests.harness.cli.invoke import invoke

    out = tmp_path / "r"
    args = ("run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "raw", "--tasks", "5")
    assert invoke(*args, "--out", out)[0].exit_code == 0
    before = (out / "records.jsonl").read_text().splitlines()
    rows = [_json.loads(x) for x in before]
    (out / rows[1]["transcript"]).write_bytes(b"")
    (out / rows[3]["transcript"]).write_bytes(b"")
    (out / rows[4]["transcript"]).unlink()
    result, text = invoke(*args, "--out", out)
    assert result.exit_code == 0, text
    assert "3 records had lost their transcripts" in " ".join(text.split()) and "3 episodes played" in text
    after = [_json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in after) == sorted(r["task_id"] for r in rows)  # each once
    assert all((out / r["transcript"]).stat().st_size > 0 for r in after)
    # the untouched records keep their lines byte for byte
    assert (out / "records.jsonl").read_text().splitlines()[:2] == [before[0], before[2]]


def test_an_api_key_equal_to_a_model_name_leaves_the_records_keys_alone(tmp_path, monkeypatch):
    """Masking the key inside the records' key fields would make every resume replay everything."""
    import json as _json

    from tests.harness.cli.invoke import invoke

    monkeypatch.setenv("OPENAI_API_KEY", "agent:reader")
    out = tmp_path / "r"
    args = ("run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "raw", "--tasks", "3")
    assert invoke(*args, "--out", out)[0].exit_code == 0
    rows = [_json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert {r["model"] for r in rows} == {"agent:reader"}
    result, text = invoke(*args, "--out", out)
    assert result.exit_code == 0 and "0 episodes played, 3 already recorded" in text, text
