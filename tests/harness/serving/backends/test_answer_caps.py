"""What a 200 answer may carry into a record, through a real run on loopback: token usage no call
can have is recorded as unknown with one warning; native tool calls are read up to the cap on a
text answer; NUL bytes in prose are prose (no call attempted), not an unparseable call."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from envs.contract import ToolSpec
from harness.cli import app
from harness.serving.backends import answers
from harness.serving.backends.parse import MAX_ANSWER_CHARS
from harness.serving.backends.turns import RawCall, to_turn
from harness.types import Usage
from tests.scripted_server import Reply, ScriptedServer, call


@pytest.mark.parametrize(
    "sent, read",
    [
        ({"prompt_tokens": 300, "completion_tokens": 20}, (300, 20, None)),
        ({"prompt_tokens": 300.0, "completion_tokens": 0}, (300, 0, None)),
        ({"prompt_tokens": 5}, (5, None, None)),
        (None, (None, None, None)),
        ({"prompt_tokens": -24, "completion_tokens": 20}, (None, None, "prompt_tokens -24")),
        ({"prompt_tokens": 300, "completion_tokens": 10**18}, (None, None, "completion_tokens 1000000000000000000")),
        ({"prompt_tokens": "12", "completion_tokens": 3}, (None, None, 'prompt_tokens "12"')),
        ({"prompt_tokens": True, "completion_tokens": 3}, (None, None, "prompt_tokens true")),
        ({"prompt_tokens": 12.5, "completion_tokens": 3}, (None, None, "prompt_tokens 12.5")),
        ([1, 2], (None, None, "usage an array, not an object")),
    ],
)
def test_usage_is_believed_only_when_a_call_can_have_it(sent, read):
    assert answers.usage(sent) == read


def run_cli(url: str, out: Path, *extra: str) -> tuple[int, str, list[dict[str, Any]]]:
    args = ["run", "--suite", "bank-disputes", "--model", "scripted-model", "--conditions", "raw"]
    # --no-preflight: these answers are what a run meets mid-run, not what the preflight refuses first
    result = CliRunner().invoke(
        app, [*args, "--endpoint", url, "--out", str(out), "--tasks", "2", "--no-preflight", *extra]
    )
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return result.exit_code, " ".join(result.output.split()), rows


@pytest.mark.parametrize("tokens", [-24, 10**18])
def test_impossible_usage_is_recorded_as_missing_with_one_warning(tmp_path, tokens):
    with ScriptedServer(lambda body: Reply(text="no idea", prompt_tokens=tokens, completion_tokens=5)) as server:
        code, output, rows = run_cli(server.url, tmp_path / "run")
    assert code == 0, output
    calls = [c for r in rows for c in r["calls"]]
    assert len(calls) == 8 and all(c["prompt_tokens"] is None and c["completion_tokens"] is None for c in calls)
    assert all(r["prompt_tokens"] is None and r["usage_missing"] == len(r["calls"]) for r in rows)
    assert output.count("warning:") == 1 and f"{server.url} sent token usage no call can have" in output
    assert f"prompt_tokens {tokens}" in output and " 0 tokens" in output  # the summary counts none of them


def test_a_5_mb_native_argument_is_not_read_copied_or_sent_back(tmp_path):
    huge = call("open_dispute", {"reason": "x" * 5_000_000})
    with ScriptedServer(lambda body: Reply(text=None, tool_calls=[huge])) as server:
        code, output, rows = run_cli(server.url, tmp_path / "run", "--tasks", "1", "--tool-mode", "native")
        sent = [len(json.dumps(body)) for body in server.requests]
    assert code == 0, output
    assert rows[0]["failure_codes"] == ["unparseable_call"] * 4 and rows[0]["success"] is False
    transcript = tmp_path / "run" / rows[0]["transcript"]
    assert transcript.stat().st_size < 100_000 and max(sent) < 100_000
    assert "over the 20,000 the harness reads" in transcript.read_text()


def test_native_calls_are_read_up_to_the_answer_cap_in_all():
    look = ToolSpec(name="look", description="Look.", parameters={"type": "object", "properties": {}})

    def native(calls: list[RawCall]):
        return to_turn(
            None,
            native_calls=calls,
            usage=Usage(),
            finish_reason="tool_calls",
            latency_s=0.0,
            model_id="m",
            tools=[look],
            tool_mode="native",
            text_calls="parse",
        )

    fits = [RawCall("look", json.dumps({"a": "x" * 900}), f"c{i}") for i in range(20)]  # 18,000+ characters
    assert len(native(fits).tool_calls) == 20 and native(fits).parse_error is None
    over = [*fits, RawCall("look", {"a": "x" * 3000}, "c20")]  # an object where the wire has a string counts too
    read = native(over)
    assert read.tool_calls == [] and f"over the {MAX_ANSWER_CHARS:,}" in read.parse_error


def test_nul_bytes_in_prose_are_no_call_not_an_unparseable_one(tmp_path):
    with ScriptedServer(lambda body: Reply(text="I would rather\x00 not\x01 say")) as server:
        code, output, rows = run_cli(server.url, tmp_path / "run", "--tasks", "1", "--tool-mode", "native")
    assert code == 0, output
    assert rows[0]["failure_codes"] == ["no_action"] * 4
