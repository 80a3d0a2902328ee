"""Any OpenAI-compatible endpoint (vLLM, llama.cpp server, hosted APIs), on the OpenAI wire format.

Every request goes through one `transport.Transport` (aiohttp): the model list and the chat calls
(`Decoding.stream` can only be false: nothing streams). Chat bodies are built once as JSON and
posted by the transport; the answer is read by `answers.completion`, which names the field a
server got wrong (`choices[0].message is null`) where the SDK's `ChatCompletion` raised a Python
exception or a pydantic dump. The SDK's `create()` walks each body against its TypedDicts and
runs it through its middleware: on 2 cores that is 3-10 ms a call, more than the rest of an
episode (benchmarks/throughput.py).

Native mode sends the tools through the API (`tool_choice="auto"`: llama.cpp's server reads an
omitted tool_choice as "none"). Prompt mode describes the tools in the system message and reads
calls out of the text with our own parser. Transient failures (429, 5xx, timeouts, lost
connections, malformed answers) are retried with exponential backoff, or after the wait a
`Retry-After` asks for, up to `defaults.MAX_RETRY_AFTER_S`; after that the call raises HarnessError
with the cause. A 401, 403, 404 or a redirect is fatal: every call would get the same answer,
so the run stops at the first. Token usage no call can have is recorded as unknown, and the
backend says so once (`warn`).
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import time
from collections.abc import Callable
from typing import Any

import orjson

from envs.contract import Decoding, ToolCall, ToolSpec
from harness import defaults
from harness.errors import HarnessError
from harness.redact import remember
from harness.serving.backends import answers
from harness.serving.backends.base import ToolMode
from harness.serving.backends.constrain import Style, read_answer, request_fields
from harness.serving.backends.prompt_tools import with_tools_prompt
from harness.serving.backends.transport import MIB, StatusError, Transport, TransportError
from harness.serving.backends.turns import to_turn
from harness.types import ModelTurn, Usage


def _sanitize(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """llama.cpp's server answers 500 to an assistant message with content null; send ""."""
    return [{**m, "content": m.get("content") or ""} for m in messages]


def _flatten_tool_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """For chat templates that render no tool turns (llama.cpp's chatml formats drop `tool`
    messages and the assistant's tool_calls): the call as tagged text, the result as a user turn.
    Without this the model never sees an observation or any feedback."""
    out = []
    for m in messages:
        if m["role"] == "tool":
            out.append({"role": "user", "content": f"Tool result:\n{m.get('content') or ''}"})
        elif m["role"] == "assistant" and m.get("tool_calls"):
            calls = "".join(
                f'<tool_call>{{"name": {json.dumps(c["function"]["name"])}, '
                f'"arguments": {c["function"]["arguments"]}}}</tool_call>'
                for c in m["tool_calls"]
            )
            out.append({"role": "assistant", "content": f"{m.get('content') or ''}{calls}"})
        else:
            out.append(m)
    return out


def _encode(body: dict[str, Any]) -> bytes:
    """The request body as compact UTF-8 JSON. orjson writes what `json.dumps(body,
    ensure_ascii=False, separators=(",", ":"))` writes (floats may be spelt shorter: 1e-5 for
    1e-05, the same number) in a tenth of its time; what orjson refuses (a lone surrogate in a
    message, an integer beyond 64 bits) is sent as the standard library writes it, escaped."""
    try:
        return orjson.dumps(body)
    except TypeError:
        return json.dumps(body, separators=(",", ":")).encode()


class OpenAIBackend:
    name = "openai"

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = "OPENAI_API_KEY",
        timeout_s: float = defaults.REQUEST_TIMEOUT_S,
        max_retries: int = defaults.MAX_RETRIES,
        backoff_s: float = 0.5,
        text_calls: str = "parse",
        flatten_tool_turns: bool = False,
        server_died: Callable[[], str | None] | None = None,
        max_response_mib: float = defaults.MAX_RESPONSE_MIB,
        constrain_style: Style = "openai",
        warn: Callable[[str], None] | None = None,
    ):
        self.base_url, self.model = base_url, model
        self.max_retries, self.backoff_s, self.text_calls = max_retries, backoff_s, text_calls
        self.api_key_env = api_key_env
        # how this server is asked for constrained output (harness.serving.backends.constrain)
        self.constrain_style = constrain_style
        self.flatten_tool_turns = flatten_tool_turns
        # for a server the harness started: how it died, once it has (ManagedServer.died)
        self.server_died = server_died
        # what this server sent that the harness did not believe, said once each (to `warn`)
        self.warnings: list[str] = []
        self._warn = warn
        # a 401, 403, 404 or redirect: what every later call would be answered, so none is sent
        self._refused: str | None = None
        # the key is read here and handed only to the transport: it is never part of a record
        key = os.environ.get(api_key_env) or "no-key"
        if key.lower() not in model.lower():  # a key that is the model's name is no secret (Redactor.from_env)
            remember(key)  # every text cut before it reaches a Redactor is masked first (redact.cut)
        try:
            self.transport = Transport(
                base_url,
                api_key=key,
                timeout_s=timeout_s,
                max_response_bytes=int(max_response_mib * MIB),
                user_agent=f"repair-harness openai/{importlib.metadata.version('openai')}",
            )
        except ValueError as exc:  # every call would fail alike: the run stops
            raise HarnessError(f"{self.base_url}: {exc}", fatal=True) from None

    def for_episode(self, env: Any) -> OpenAIBackend:
        """A model plays every episode as it is: the env is never shown to it."""
        return self

    async def model_id(self) -> str | None:
        ids = await self.served_models()
        return self.model if self.model in ids else (ids[0] if ids else None)

    async def served_models(self) -> list[str]:
        ids: list[str] = await self._with_retries(lambda: self.transport.get("models", answers.model_ids))
        return ids

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def _with_retries(self, make_call: Any) -> Any:
        last: TransportError | None = None
        for attempt in range(self.max_retries + 1):
            if self._refused is not None:  # the server's answer to every call is known: none is sent
                raise HarnessError(self._refused, fatal=True)
            try:
                return await make_call()
            except TransportError as exc:
                error = exc
            death = self.server_died() if self.server_died is not None else None
            if death is not None:  # no retry reaches a dead server: the run stops, saying why
                raise HarnessError(death, fatal=True) from None
            if error.fatal:
                status = getattr(error, "status", 0)
                if status == 401 and os.environ.get(self.api_key_env):  # a key was sent: it is the wrong one
                    status = "401-sent"
                hint = _HINTS.get(status, "").format(var=self.api_key_env)
                self._refused = f"{self.base_url}: {error}" + (f"; {hint}" if hint else "")
                raise HarnessError(self._refused, fatal=True) from None
            if not error.retryable:
                raise HarnessError(f"{self.base_url}: {error}", fatal=error.gone) from None
            last = error
            if attempt < self.max_retries:
                await asyncio.sleep(self._delay(error, attempt))
        assert last is not None
        raise HarnessError(
            f"{self.base_url}: gave up after {self.max_retries + 1} attempts: {last}", fatal=last.gone
        ) from None

    def _delay(self, error: TransportError, attempt: int) -> float:
        """The backoff, or the wait the server asked for; a wait past the maximum stops the run
        with the wait named (never cut short: a server that asked for an hour is not called sooner)."""
        delay = min(self.backoff_s * (2**attempt), 30.0)
        asked = error.retry_after_s() if isinstance(error, StatusError) else None
        if isinstance(error, StatusError) and asked is not None:
            if asked > defaults.MAX_RETRY_AFTER_S:
                raise HarnessError(
                    f"{self.base_url}: HTTP {error.status} with Retry-After {asked:.0f} s, longer than the "
                    f"{defaults.MAX_RETRY_AFTER_S:.0f} s the harness waits; the run stops: resume it later",
                    fatal=True,
                )
            delay = max(delay, asked)
        return delay

    async def generate(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], decoding: Decoding, tool_mode: ToolMode
    ) -> ModelTurn:
        if tools and tool_mode == "prompt":
            messages = with_tools_prompt(messages, tools)
        if self.flatten_tool_turns:
            messages = _flatten_tool_turns(messages)
        # BFCL's runner sends its history as it holds it: an assistant message's null content too
        as_served = decoding.reading == "bfcl"
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages if as_served else _sanitize(messages),
            "temperature": decoding.temperature,
        }
        # optional keys are sent only when set: a protocol reproducing another harness's requests
        # (veriharness, bfcl) must send exactly that harness's keys
        for key in ("max_tokens", "top_p", "seed", "stream", "store"):
            if getattr(decoding, key) is not None:
                kwargs[key] = getattr(decoding, key)
        if tools and tool_mode == "native":
            kwargs["tools"] = [t.openai() for t in tools]
            if decoding.tool_choice is not None:
                kwargs["tool_choice"] = decoding.tool_choice
        kwargs.update(request_fields(decoding.constrain, self.constrain_style, tools, kwargs.get("tools")))
        start = time.perf_counter()
        resp = await self._with_retries(
            lambda: self.transport.post("chat/completions", _encode(kwargs), answers.completion)
        )
        latency = time.perf_counter() - start
        turn = self._turn(resp, latency, tools, tool_mode, decoding.reading)
        if decoding.constrain != "none" and tool_mode == "prompt" and not turn.tool_calls:
            turn = _constrained(turn, tools)
        return turn

    def _turn(
        self,
        resp: answers.Completion,
        latency: float,
        tools: list[ToolSpec],
        tool_mode: ToolMode,
        reading: str = "harness",
    ) -> ModelTurn:
        if resp.usage_fault is not None:
            self.warn(
                "usage",
                f"{self.base_url} sent token usage no call can have ({resp.usage_fault}); such calls are "
                "recorded with their usage unknown (usage_missing counts them), never as a count",
            )
        # the server ran its tool parser: a call left in the text is one it did not accept; a
        # server relays what the model wrote: a call may lack parts, and that is the model's failure
        turn = to_turn(
            resp.content,
            native_calls=resp.calls,
            usage=Usage(prompt_tokens=resp.prompt_tokens, completion_tokens=resp.completion_tokens),
            finish_reason=resp.finish_reason,
            latency_s=latency,
            model_id=resp.model,
            tools=tools,
            tool_mode=tool_mode,
            text_calls=self.text_calls,
            reading=reading,
        )
        if reading == "bfcl":
            turn.message = resp.message
        # BFCL's handler reads no refusal: such an answer is its text, which ends the turn
        return turn.model_copy(update={"refusal": resp.refusal}) if resp.refusal and reading != "bfcl" else turn

    def warn(self, kind: str, text: str) -> None:
        """Say `text` once per backend for each kind of thing a server got wrong."""
        if any(w.startswith(f"{kind}: ") for w in self.warnings):
            return
        self.warnings.append(f"{kind}: {text}")
        if self._warn is not None:
            self._warn(text)


# what an answer of these statuses means for the whole grid, said after the server's own words
_HINTS: dict[int | str, str] = {
    401: "the server wants an API key: put it in ${var} (or name another variable with --api-key-env)",
    "401-sent": "the server does not accept the key in ${var}: check it, or name another variable with --api-key-env",
    403: "the server refuses the key in ${var}, or this key may not use the model",
    404: "the server has no such model or path: check --endpoint (it ends with /v1) and --model",
}


def _constrained(turn: ModelTurn, tools: list[ToolSpec]) -> ModelTurn:
    """A constrained prompt-mode answer the ordinary parser could not read: the call or the
    message the schema allows (harness.serving.backends.constrain.read_answer), else as it was."""
    read = read_answer(turn.text, {t.name for t in tools})
    if read is None:
        return turn
    kind, value = read
    if kind == "message":
        return turn.model_copy(update={"text": value, "parse_error": None})
    name, arguments = value
    return turn.model_copy(
        update={
            "tool_calls": [ToolCall(name=name, arguments=arguments, id="call_0", parse_mode="constrained")],
            "parse_error": None,
        }
    )
