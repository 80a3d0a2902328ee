"""The chat call posted without the SDK's create(): what the server receives and what comes back
(answers, HTTP errors, retries, a dead server) must be what the SDK path gave."""

from __future__ import annotations

import asyncio

import pytest

from envs.contract import Decoding, ToolSpec
from harness.errors import HarnessError
from harness.serving.backends.openai_compat import OpenAIBackend
from tests.scripted_server import Reply, ScriptedServer, call

TOOL = ToolSpec(
    name="open_dispute",
    description="Open a dispute.",
    parameters={"type": "object", "properties": {"reason": {"type": "string"}}, "required": ["reason"]},
)
MESSAGES = [{"role": "user", "content": "Откройте спор ✓"}]


def _generate(url: str, **kwargs: object):
    async def go():
        backend = OpenAIBackend(url, "scripted-model", backoff_s=0.01, **kwargs)
        try:
            return await backend.generate(MESSAGES, [TOOL], Decoding(seed=7), "native")
        finally:
            await backend.aclose()

    return asyncio.run(go())


def test_the_body_is_what_the_sdk_sends_and_the_answer_is_read_as_before():
    with ScriptedServer(lambda body: Reply(tool_calls=[call("open_dispute", {"reason": "fraud"})])) as server:
        turn = _generate(server.url)
    (body,) = server.requests
    assert body["messages"] == MESSAGES  # unicode as it was, not escaped differently
    assert body["tools"] == [TOOL.openai()] and body["tool_choice"] == "auto"
    assert body["model"] == "scripted-model" and body["seed"] == 7 and "stream" not in body
    assert server.headers_seen[0]["Authorization"] == "Bearer no-key"
    assert [(c.name, c.arguments, c.parse_mode) for c in turn.tool_calls] == [
        ("open_dispute", {"reason": "fraud"}, "native")
    ]
    assert (turn.usage.prompt_tokens, turn.usage.completion_tokens, turn.model_id) == (11, 7, "scripted-model")


def test_an_answer_the_sdk_types_do_not_validate_is_still_read():
    # a server that omits `created` and `object`, and sends an unknown key: the SDK reads it unvalidated
    odd = {
        "id": "x",
        "model": "scripted-model",
        "extra_key": 1,
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "plain text"}}],
    }
    with ScriptedServer(lambda body: Reply(body=odd)) as server:
        turn = _generate(server.url)
    assert turn.text == "plain text" and turn.usage.prompt_tokens is None


def test_server_errors_are_retried_then_become_a_harness_error_with_the_servers_message():
    answers = iter([Reply(status=503), Reply(status=500), Reply(text="ok")])
    with ScriptedServer(lambda body: next(answers)) as server:
        assert _generate(server.url, max_retries=2).text == "ok"
    assert len(server.requests) == 3
    with ScriptedServer(lambda body: Reply(status=400)) as server:
        with pytest.raises(HarnessError, match=r"HTTP 400: scripted 400") as info:
            _generate(server.url, max_retries=3)
    assert len(server.requests) == 1 and not info.value.fatal  # a 400 is not retried


def test_a_401_names_the_key_variable_and_a_dead_server_is_fatal(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-this-is-a-test-key")
    with ScriptedServer(lambda body: Reply(status=401)) as server:
        with pytest.raises(HarnessError, match=r"HTTP 401.*\$MY_KEY") as info:
            _generate(server.url, api_key_env="MY_KEY")
        assert info.value.fatal and len(server.requests) == 1  # every call would be refused alike
        assert server.headers_seen[0]["Authorization"] == "Bearer sk-this-is-a-test-key"
        url = server.url
    with pytest.raises(
        HarnessError, match=r"gave up after 2 attempts: cannot connect to 127.0.0.1:\d+: Connection refused"
    ) as info:
        _generate(url, max_retries=1)
    assert info.value.fatal


def test_a_key_that_cannot_be_a_header_stops_the_run_without_being_quoted(monkeypatch):
    monkeypatch.setenv("MY_KEY", "sk-secret-value\nX-Injected: 1")
    with ScriptedServer(lambda body: Reply(text="ok")) as server:
        with pytest.raises(HarnessError, match="control character") as info:
            _generate(server.url, api_key_env="MY_KEY")
    assert info.value.fatal and "sk-secret" not in str(info.value) and not server.requests


def test_a_slow_server_is_a_timeout_that_is_retried_and_not_fatal():
    with ScriptedServer(lambda body: Reply(text="late", delay_s=1.0)) as server:
        with pytest.raises(HarnessError, match="read timeout") as info:
            _generate(server.url, timeout_s=0.2, max_retries=1)
    assert len(server.requests) == 2 and not info.value.fatal


def test_a_200_that_is_not_json_is_a_harness_error():
    with ScriptedServer(lambda body: Reply(body=["not", "an", "object"])) as server:
        with pytest.raises(
            HarnessError, match=r"HTTP 200 from POST /chat/completions: the body is an array, not an object"
        ):
            _generate(server.url)


def test_the_timeout_and_retries_default_to_the_run_specs_one_home():
    import inspect

    from harness import defaults
    from harness.run_spec import RunSpec
    from harness.serving.backends.openai_compat import OpenAIBackend

    params = inspect.signature(OpenAIBackend).parameters
    assert (
        params["timeout_s"].default == RunSpec.model_fields["request_timeout_s"].default == defaults.REQUEST_TIMEOUT_S
    )
    assert params["max_retries"].default == RunSpec.model_fields["max_retries"].default == defaults.MAX_RETRIES
