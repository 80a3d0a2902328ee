"""Every answer a server can give is bounded and named, on real loopback sockets: JSON nested
100,000 deep (a model list, an error body, a completion), a 3xx (never followed, never read as an
answer), a malformed 200 completion (the field at fault named), a 401/403/404 (the run stops)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from envs.contract import Decoding, ToolSpec
from harness.cli import app
from harness.errors import HarnessError
from harness.serving.backends.openai_compat import OpenAIBackend
from tests.raw_server import RawServer

DEEP = b"[" * 100_000 + b"]" * 100_000
MODELS = b'{"object":"list","data":[{"id":"m","object":"model"}]}'
TOOL = ToolSpec(name="look", description="Look.", parameters={"type": "object", "properties": {}})


def completion(message: Any = None, **top: Any) -> bytes:
    message = {"role": "assistant", "content": "hello"} if message is None else message
    body = {"id": "c", "model": "m", "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}
    return json.dumps({**body, **top}).encode()


def http(status: int, body: bytes = b"", headers: str = "") -> bytes:
    reason = {200: "OK", 302: "Found", 307: "Temporary Redirect"}.get(status, "Status")
    return f"HTTP/1.1 {status} {reason}\r\nContent-Length: {len(body)}\r\n{headers}\r\n".encode() + body


def chat_answers(chat: bytes) -> Callable[[str, str], bytes]:
    return lambda method, path: http(200, MODELS) if path.endswith("/models") else chat


def generate(url: str, **kwargs: Any):
    async def go():
        backend = OpenAIBackend(url, "m", backoff_s=0.01, **kwargs)
        try:
            return await backend.generate([{"role": "user", "content": "hi"}], [TOOL], Decoding(), "native")
        finally:
            await backend.aclose()

    return asyncio.run(go())


def served(url: str) -> list[str]:
    async def go():
        backend = OpenAIBackend(url, "m", backoff_s=0.01, max_retries=1)
        try:
            return await backend.served_models()
        finally:
            await backend.aclose()

    return asyncio.run(go())


def run_cli(url: str, out: str, *extra: str) -> tuple[int, str]:
    args = ["run", "--suite", "bank-disputes", "--model", "m", "--conditions", "raw", "--endpoint", url]
    # --no-preflight: these answers are what a run meets mid-run, not what the preflight refuses first
    result = CliRunner().invoke(
        app, [*args, "--out", out, "--tasks", "2", "--concurrency", "1", "--no-preflight", *extra]
    )
    return result.exit_code, " ".join(result.output.split())


def test_a_deep_model_list_is_a_start_failure_with_exit_3_and_no_traceback(tmp_path):
    with RawServer(lambda method, path: http(200, DEEP)) as server:
        with pytest.raises(HarnessError, match=r"not a model list: the body is JSON nested deeper than 64 levels"):
            served(server.url)
        code, output = run_cli(server.url, str(tmp_path / "run"))
    assert code == 3 and "cannot start:" in output and "nested deeper" in output, output
    assert "Traceback" not in output and "RecursionError" not in output


def test_a_deep_500_names_the_status_and_is_retried():
    with RawServer(lambda method, path: http(500, DEEP)) as server:
        with pytest.raises(HarnessError, match=r"gave up after 3 attempts: HTTP 500: the body is JSON nested deeper"):
            generate(server.url, max_retries=2)
    assert server.chats() == 3


def test_a_deep_200_completion_is_named_not_a_recursion_error():
    with RawServer(chat_answers(http(200, DEEP))) as server:
        with pytest.raises(HarnessError, match=r"HTTP 200 from POST /chat/completions: the body is JSON nested deeper"):
            generate(server.url)


def test_a_302_with_a_completion_is_a_fatal_harness_error_naming_its_location_never_scored(tmp_path):
    redirect = http(302, completion(), "Location: http://user:hunter2@elsewhere.example/v1/chat/completions\r\n")
    with RawServer(chat_answers(redirect)) as server:
        with pytest.raises(HarnessError) as info:
            generate(server.url)
        said = str(info.value)
        assert info.value.fatal and "HTTP 302: the server redirects POST" in said
        assert "to http://***@elsewhere.example/v1/chat/completions" in said and "hunter2" not in said
        code, output = run_cli(server.url, str(tmp_path / "run"))
    assert code == 3 and "stopped:" in output and "redirects" in output, output
    rows = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["success"] is None and "HTTP 302" in rows[0]["harness_error"]
    assert server.chats() == 2  # generate's call, then the run's first: the run stopped there


@pytest.mark.parametrize("status", [301, 307, 308])
def test_a_redirect_with_an_empty_body_says_redirect_not_json(status):
    with RawServer(chat_answers(http(status, b"", "Location: /v2/chat/completions\r\n"))) as server:
        with pytest.raises(HarnessError, match=rf"HTTP {status}: the server redirects POST .* to http://127\.0\.0\.1"):
            generate(server.url)


def test_a_redirect_at_start_is_named(tmp_path):
    with RawServer(lambda method, path: http(302, b"", "Location: https://login.example/\r\n")) as server:
        code, output = run_cli(server.url, str(tmp_path / "run"))
    assert code == 3 and "HTTP 302: the server redirects GET" in output and "https://login.example/" in output


MALFORMED = [
    (
        completion(message=None) if False else json.dumps({"choices": [{"message": None}]}).encode(),
        "choices[0].message is null",
    ),
    (json.dumps({"choices": 5}).encode(), "choices is an integer, not an array"),
    (json.dumps({"choices": [7]}).encode(), "choices[0] is an integer, not an object"),
    (completion({"content": None, "tool_calls": 3}), "choices[0].message.tool_calls is an integer, not an array"),
    (completion({"content": None, "tool_calls": [5]}), "choices[0].message.tool_calls[0] is an integer, not an object"),
    (completion({"tool_calls": [{"id": "c", "function": None}]}), "tool_calls[0].function is null, not an object"),
    (
        completion({"tool_calls": [{"id": 3, "function": {"name": "look"}}]}),
        "tool_calls[0].id is an integer, not a string",
    ),
    (completion({"content": ["a", "list"]}), "choices[0].message.content is an array, not a string"),
    (completion({"content": "x", "refusal": {"why": 1}}), "choices[0].message.refusal is an object, not a string"),
    (completion(model=12), "model is an integer, not a string"),
    (
        json.dumps({"choices": [{"message": {"content": "x"}, "finish_reason": 1}]}).encode(),
        "finish_reason is an integer",
    ),
    (json.dumps({"error": {"message": "overloaded"}}).encode(), 'no choices: {"message": "overloaded"}'),
    (b"", "the body is not JSON"),
    (b"<html>502 Bad Gateway</html>", "the body is not JSON"),
]


@pytest.mark.parametrize("body, fault", MALFORMED, ids=[f for _, f in MALFORMED])
def test_a_malformed_200_completion_names_the_field_at_fault(body, fault):
    with RawServer(chat_answers(http(200, body))) as server:
        with pytest.raises(HarnessError) as info:
            generate(server.url)
    said = str(info.value)
    assert "HTTP 200 from POST /chat/completions: " in said and fault in said, said
    assert not info.value.fatal and server.chats() == 1  # a harness error of this episode, not retried


@pytest.mark.parametrize("status", [401, 403, 404])
def test_an_auth_or_not_found_answer_stops_the_run_after_the_first_request(tmp_path, status):
    error = json.dumps({"error": {"message": f"scripted {status}"}}).encode()
    with RawServer(chat_answers(http(status, error))) as server:
        code, output = run_cli(server.url, str(tmp_path / "run"), "--tasks", "5")
    assert code == 3 and f"HTTP {status}: scripted {status}" in output and "stopped:" in output, output
    assert server.chats() == 1  # the first episode's call: no episode after it
    rows = (tmp_path / "run" / "records.jsonl").read_text().splitlines()
    assert len(rows) == 1 and json.loads(rows[0])["success"] is None


def test_after_a_refusal_no_call_reaches_the_server_and_concurrent_episodes_stop(tmp_path):
    refused = http(401, b'{"error": {"message": "bad key"}}')
    with RawServer(chat_answers(refused)) as server:

        async def twice():
            backend = OpenAIBackend(server.url, "m")
            try:
                for _ in range(2):
                    with pytest.raises(HarnessError, match="HTTP 401: bad key") as info:
                        await backend.generate([{"role": "user", "content": "hi"}], [TOOL], Decoding(), "native")
                    assert info.value.fatal
            finally:
                await backend.aclose()

        asyncio.run(twice())
        assert server.chats() == 1
        code, output = run_cli(server.url, str(tmp_path / "run"), "--tasks", "20", "--concurrency", "4")
    # the episodes in flight when the first answer came each sent one call; none was sent after it
    assert code == 3 and 2 <= server.chats() <= 5, (server.chats(), output)
