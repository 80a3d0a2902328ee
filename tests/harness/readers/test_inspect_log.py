"""`export --inspect`: every record comes back from inspect_ai's own reader as its sample.

Two runs: the reference agents (no tokens) and a scripted server (a test double: its token counts
are fixed numbers) that is wrong once before the gold call, and fails with HTTP 500 on one task.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import sys
from pathlib import Path

import inspect_ai.log as inspect_log  # the [inspect] extra is part of [dev]: a missing one fails here
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.readers.inspect_log import export
from harness.runner import run
from harness.spec import build_spec
from tests.harness.bank_script import GOLD, answer, customer_message, failed_attempts
from tests.scripted_server import Reply, ScriptedServer

ACCEPTED = {"accepted", "won", "lost", "review"}


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "records.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    root = tmp_path_factory.mktemp("inspect")
    agents = build_spec(
        {
            "suite": "bank-disputes",
            "models": ["agent:gold", "agent:reader"],
            "tool_mode": "prompt",
            "conditions": ["raw", "allowed_json"],
            "tasks": 2,
            "sample_seeds": [3, 5],
            "out": str(root / "agents"),
        }
    )
    asyncio.run(run(agents))
    down = list(GOLD)[2]  # the customer message of the third task (GOLD keeps the suite's order)

    def responder(body):
        message = customer_message(body)
        if message == down:
            return Reply(status=500)  # every call of that task fails: its episodes are harness errors
        gold = GOLD[message]
        failed = failed_attempts(body)
        reply = answer({**gold, "reason": "chargeback"} if failed < 1 else gold, "native")
        reply.prompt_tokens, reply.completion_tokens = 300 + 10 * failed, 20
        return reply

    with ScriptedServer(responder) as server:
        spec = build_spec(
            {
                "suite": "bank-disputes",
                "models": ["scripted-model"],
                "endpoints": [server.url],
                "conditions": ["raw", "allowed_json"],
                "tasks": 3,
                "tool_mode": "native",
                "max_retries": 0,
                "concurrency": 1,
                "out": str(root / "scripted"),
            }
        )
        asyncio.run(run(spec))
    return [root / "agents", root / "scripted"]


def test_every_record_is_its_sample(runs, tmp_path):
    out = tmp_path / "logs"
    done = export(runs, out)
    records = [r for d in runs for r in _records(d)]
    assert done.records == len(records) and done.samples == len(records)
    assert any(r["harness_error"] for r in records) and any(r["prompt_tokens"] for r in records)
    logs = {p.name: inspect_log.read_eval_log(str(p)) for p in sorted(out.glob("*.eval"))}
    assert len(logs) == len({(r["suite"], r["model"], r["condition"], r["budget"]) for r in records}) == len(done.files)
    for run_dir in runs:
        seeds = sorted({r["sample_seed"] for r in _records(run_dir)})
        for rec in _records(run_dir):
            log = next(
                v
                for v in logs.values()
                if v.eval.model == rec["model"]
                and v.eval.metadata["condition"] == rec["condition"]
                and v.eval.task == rec["suite"]
            )
            (s,) = [s for s in log.samples if s.id == rec["task_id"] and s.epoch == 1 + seeds.index(rec["sample_seed"])]
            assert s.metadata["sample_seed"] == rec["sample_seed"] and s.metadata["condition"] == rec["condition"]
            if rec["harness_error"]:
                assert s.error is not None and rec["harness_error"] in s.error.message and not s.scores
            else:
                assert s.error is None and s.scores["success"].value == (1 if rec["success"] else 0)
            if rec["prompt_tokens"] is not None:
                (u,) = s.model_usage.values()
                assert (u.input_tokens, u.output_tokens) == (rec["prompt_tokens"], rec["completion_tokens"])
            else:
                assert not s.model_usage
            per_call = [m.metadata["usage"] for m in s.messages if m.role == "assistant"]
            assert [c.get("prompt_tokens") for c in per_call] == [c["prompt_tokens"] for c in rec["calls"]]
            rejected = sum(c["outcome"] not in ACCEPTED for c in rec["calls"])
            errors = [m for m in s.messages if m.role == "tool" and m.error is not None]
            assert len(errors) >= rejected
            if rejected:
                assert errors[0].error.message and errors[0].tool_call_id
    scripted = [r for r in _records(runs[1]) if r["success"]]
    assert scripted and all(r["repaired"] for r in scripted)  # the fixture exercises a rejected call, then a repair
    prompt_mode = next(v for v in logs.values() if v.eval.model == "agent:reader").samples[0]
    assert "prompt tool mode" in prompt_mode.metadata["feedback_as"]


def test_export_twice_gives_the_same_files(runs, tmp_path):
    a, b = export(runs, tmp_path / "a"), export(runs, tmp_path / "b")
    assert [p.name for p in a.files] == [p.name for p in b.files]
    assert all(x.read_bytes() == y.read_bytes() for x, y in zip(a.files, b.files, strict=True))


def test_the_cli_counts_logs_and_warns_about_a_run_being_written(runs, tmp_path):
    fd = os.open(runs[0] / ".lock", os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as a run still playing holds it
    try:
        result = CliRunner().invoke(app, ["export", *map(str, runs), "--inspect", str(tmp_path / "cli")])
    finally:
        os.close(fd)
    text = result.stdout + result.stderr
    assert result.exit_code == 0, text
    assert "still being written" in text and str(runs[0]) in " ".join(text.split())
    assert f"{len(list((tmp_path / 'cli').glob('*.eval')))} inspect logs" in text


def test_a_missing_extra_is_one_line_and_exit_2(runs, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)  # as an install without [inspect]
    result = CliRunner().invoke(app, ["export", str(runs[0]), "--inspect", str(tmp_path / "x")])
    assert result.exit_code == 2 and 'pip install -e ".[inspect]"' in result.stderr
    assert "Traceback" not in result.stdout + result.stderr and not (tmp_path / "x").exists()
    result = CliRunner().invoke(app, ["export", str(runs[0])])
    assert result.exit_code == 2 and "--parquet" in result.stderr and "--inspect" in result.stderr
