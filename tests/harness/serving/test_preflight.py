"""The preflight: each check passes against a server that works, and fails, naming its cause and
fix, against scripted servers that reproduce the known failures of vLLM's tool parsers and chat
templates (a call left in the content, arguments `{}""`, a template that drops tool messages),
a server that is not deterministic at temperature 0 and one whose context is shorter than the
preset's. The same checks stop `run` before any episode (exit 3)."""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from envs.contract import Decoding
from harness.errors import PreflightFailed
from harness.serving.backends.openai_compat import OpenAIBackend
from harness.serving.preflight import LONGER, check, failure
from tests.harness.cli.invoke import invoke
from tests.scripted_server import Reply, ScriptedServer, call, tagged

SERVED = ["Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"]


def tokens(body: dict[str, Any], drop_tool: bool = False) -> int:
    """Prompt tokens as a server would count them: a quarter of the characters sent."""
    return 10 + sum(len(json.dumps(m)) // 4 for m in body["messages"] if not (drop_tool and m["role"] == "tool"))


def responder(failure: str | None = None):
    counter = itertools.count()

    def reply(body: dict[str, Any]) -> Reply:
        asked = body["messages"][-1]
        wants_call = any(t["function"]["name"] == "get_weather" for t in body.get("tools", [])) and (
            asked["role"] == "user"
        )
        n = next(counter)
        if wants_call and failure == "content_call":
            return Reply(text=tagged("get_weather", {"city": "Paris"}), prompt_tokens=tokens(body))
        if wants_call and failure == "bad_args":
            bad = {"id": "call_0", "type": "function", "function": {"name": "get_weather", "arguments": '{}""'}}
            return Reply(tool_calls=[bad], prompt_tokens=tokens(body))
        if wants_call:
            return Reply(tool_calls=[call("get_weather", {"city": "Paris"})], prompt_tokens=tokens(body))
        text = "Red, orange and yellow." + (f" ({n})" if failure == "nondeterministic" else "")
        return Reply(text=text, prompt_tokens=tokens(body, drop_tool=failure == "drop_tool"))

    return reply


def checked(failure: str | None, tool_mode: str = "native", max_model_len: int | None = 8192):
    with ScriptedServer(responder(failure), models=SERVED) as server:
        if max_model_len is not None:
            server.model_fields = {"max_model_len": max_model_len}

        async def go():
            backend = OpenAIBackend(server.url, SERVED[0], max_retries=0)
            try:
                return await check(backend, "qwen2.5-7b", tool_mode)
            finally:
                await backend.aclose()

        result = asyncio.run(go())
    return {c.name: c for c in result.checks}, result


def test_a_working_server_passes_every_check():
    checks, result = checked(None)
    assert {n: c.status for n, c in checks.items()} == {
        "tool_call": "pass",
        "tool_result": "pass",
        "determinism": "pass",
        "context": "pass",
    }
    assert not result.failed and result.record()["passed"] is True
    assert checks["context"].detail == "8192 tokens (as the preset says)"


@pytest.mark.parametrize(
    "failure, check_name, cause, fix",
    [
        ("content_call", "tool_call", "came back in the message content (text_tag", "--tool-mode prompt"),
        ("bad_args", "tool_call", "arguments that do not parse", "the preset's tool parser (hermes)"),
        ("drop_tool", "tool_result", "the chat template drops tool messages", "--tool-mode prompt"),
    ],
)
def test_each_known_parser_or_template_failure_fails_its_check_naming_cause_and_fix(failure, check_name, cause, fix):
    checks, result = checked(failure)
    assert [c.name for c in result.failed] == [check_name]
    assert cause in checks[check_name].detail and fix in checks[check_name].fix
    message = str(failure_of(result))
    assert f"qwen2.5-7b ({result.endpoint}): {check_name}:" in message and "No episode was played" in message


def failure_of(result) -> PreflightFailed:
    return failure([result])


def test_a_server_not_deterministic_at_temperature_0_is_a_warning_the_run_records():
    checks, result = checked("nondeterministic")
    assert checks["determinism"].status == "warn" and not result.failed
    assert "not deterministic at temperature 0" in checks["determinism"].detail
    assert result.record()["checks"]["determinism"]["status"] == "warn"


def test_a_context_shorter_than_the_presets_fails_and_a_longer_one_passes():
    checks, _ = checked(None, max_model_len=4096)
    assert checks["context"].status == "fail" and "--max-model-len 8192" in checks["context"].fix
    checks, _ = checked(None, max_model_len=32768)
    assert checks["context"].status == "pass" and "longer than the 8192" in checks["context"].detail
    checks, _ = checked(None, max_model_len=None)
    assert checks["context"].status == "skip"


def test_prompt_mode_skips_the_parser_and_template_checks():
    checks, result = checked("content_call", tool_mode="prompt")
    assert checks["tool_call"].status == checks["tool_result"].status == "skip" and not result.failed


def test_a_server_that_fails_is_one_failure_and_the_rest_are_not_tried():
    with ScriptedServer(lambda body: Reply(status=500), models=SERVED) as server:

        async def go():
            backend = OpenAIBackend(server.url, SERVED[0], max_retries=0)
            try:
                return await check(backend, "qwen2.5-7b", "native")
            finally:
                await backend.aclose()

        result = asyncio.run(go())
        sent = len(server.requests)
    assert [c.status for c in result.checks] == ["fail", "skip", "skip", "skip"] and sent == 1
    assert result.checks[0].fix == "read the server's log"


def test_a_wrong_key_fails_the_preflight_with_the_servers_own_fix():
    """A 401 is what every call would get: the check says what the transport says (the key
    variable), not a generic pointer to a log that a remote server never showed."""
    with ScriptedServer(lambda body: Reply(status=401), models=SERVED) as server:

        async def go():
            backend = OpenAIBackend(server.url, SERVED[0], max_retries=0)
            try:
                return await check(backend, "qwen2.5-7b", "native")
            finally:
                await backend.aclose()

        result = asyncio.run(go())
    (failed,) = result.failed
    assert "HTTP 401" in failed.detail and "OPENAI_API_KEY" in failed.detail and failed.fix == ""
    assert "Fix:" not in str(failure_of(result))


def run_args(url: str, out) -> list[str]:
    return [
        *("run", "--suite", "bank-disputes", "--model", "qwen2.5-7b", "--endpoint", url),
        *("--conditions", "raw", "--tasks", "1", "--tool-mode", "native", "--out", str(out)),
    ]


def flat(text: str) -> str:
    return " ".join(text.split())


def test_a_failed_preflight_stops_the_run_before_any_episode_with_exit_3(tmp_path):
    with ScriptedServer(responder("content_call"), models=SERVED) as server:
        result, text = invoke(*run_args(server.url, tmp_path / "r"))
        asked = len(server.requests)
    text = flat(text)
    assert result.exit_code == 3, text
    assert "preflight failed: qwen2.5-7b" in text and "tool_call" in text and "--tool-mode prompt" in text
    assert "Traceback" not in text and not (tmp_path / "r").exists() and asked == 5
    with ScriptedServer(responder("content_call"), models=SERVED) as server:
        result, text = invoke(*run_args(server.url, tmp_path / "r"), "--no-preflight")
    assert result.exit_code == 0, text
    assert len((tmp_path / "r" / "records.jsonl").read_text().splitlines()) == 1


def test_check_names_the_failed_check_and_exits_3():
    with ScriptedServer(responder("drop_tool"), models=SERVED) as server:
        result, text = invoke("check", "--model", "qwen2.5-7b", "--endpoint", server.url, "--tool-mode", "native")
    text = flat(text)
    assert result.exit_code == 3, text
    assert "tool_result fail the chat template drops tool messages" in text
    assert f"{len(LONGER)} characters" in text and "preflight failed:" in text
    with ScriptedServer(responder(None), models=SERVED) as server:
        result, text = invoke("check", "--model", "qwen2.5-7b", "--endpoint", server.url, "--tool-mode", "native")
    assert result.exit_code == 0 and flat(text).endswith("passed"), text


@pytest.mark.slow
@pytest.mark.extra("local")
def test_check_passes_on_the_embedded_model_in_seconds():
    result, text = invoke("check", "--model", "local")
    text = flat(text)
    assert result.exit_code == 0, text
    assert "determinism pass" in text and "context pass 8192 tokens (as the preset says)" in text
    assert text.endswith("passed")


SCRIPTED_VLLM = Path(__file__).parents[2] / "scripted_vllm.py"


@pytest.mark.parametrize(
    "mode, failed",
    [
        ("ok", []),
        ("content_call", ["tool_call"]),
        ("bad_args", ["tool_call"]),
        ("drop_tool", ["tool_result"]),
        ("short_context", ["context"]),
        ("nondeterministic", []),
    ],
)
def test_check_starts_a_vllm_server_on_its_gpu_and_stops_it(tmp_path, mode, failed):
    log = tmp_path / "vllm.jsonl"
    env = {
        "REPAIR_HARNESS_VLLM": f"{sys.executable} {SCRIPTED_VLLM}",
        "SCRIPTED_VLLM_LOG": str(log),
        "SCRIPTED_VLLM_MODE": mode,
    }
    args = ["check", "--model", "mistral-7b-v0.3", "--tool-mode", "native", "--gpus", "1", "--gpu-memory-gib", "80"]
    result, text = invoke(*args, env=env)
    text = flat(text)
    assert result.exit_code == (3 if failed else 0), text
    for name in failed:
        assert f"{name} fail" in text
    if mode == "nondeterministic":
        assert "determinism warn" in text and "passed (warnings above)" in text
    events = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["event"] for e in events] == ["start", "stop"] and events[0]["cuda_visible_devices"] == "1"


def test_every_preflight_request_is_marked_and_an_episodes_is_not():
    # a capture of a run's requests (a protocol's, compared with its own runner's) tells them apart
    with ScriptedServer(responder(None), models=SERVED) as server:

        async def go():
            backend = OpenAIBackend(server.url, SERVED[0], max_retries=0)
            try:
                await check(backend, "qwen2.5-7b", "native")
                await backend.generate([{"role": "user", "content": "hi"}], [], Decoding(), "native")
            finally:
                await backend.aclose()

        asyncio.run(go())
        marks = [h.get("X-Repair-Harness-Request") for h in server.headers_seen]
    assert marks[:-1] == ["preflight"] * (len(marks) - 1) and len(marks) == 6 and marks[-1] is None
