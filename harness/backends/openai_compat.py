"""Any OpenAI-compatible endpoint (vLLM, llama.cpp server, hosted APIs), with the `openai` SDK's types.

Every request goes through one `transport.Transport` (httpx2): the model list and the chat calls
(`Decoding.stream` can only be false: nothing streams). Chat bodies are built once as JSON and
posted by the transport; the answer is read into the SDK's `ChatCompletion`. The
SDK's `create()` walks each body against its TypedDicts and runs it through its middleware: on 2
cores that is 3-10 ms a call, more than the rest of an episode (benchmarks/throughput.py).

Native mode sends the tools through the API (`tool_choice="auto"`: llama.cpp's server reads an
omitted tool_choice as "none"). Prompt mode describes the tools in the system message and reads
calls out of the text with our own parser. Transient failures (429, 5xx, timeouts, lost
connections, malformed answers) are retried with exponential backoff, or after the wait a
`Retry-After` asks for, up to `defaults.MAX_RETRY_AFTER_S`; after that the call raises HarnessError
with the cause.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable
from typing import Any

import openai
import orjson
from openai.types.chat import ChatCompletion

from envs.contract import Decoding, ToolCall, ToolSpec
from harness import defaults
from harness.backends.base import ToolMode
from harness.backends.constrain import Style, read_answer, request_fields
from harness.backends.prompt_tools import with_tools_prompt
from harness.backends.transport import MIB, StatusError, Transport, TransportError
from harness.backends.turns import RawCall, to_turn
from harness.errors import HarnessError
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
    ):
        self.base_url, self.model = base_url, model
        self.max_retries, self.backoff_s, self.text_calls = max_retries, backoff_s, text_calls
        self.api_key_env = api_key_env
        # how this server is asked for constrained output (harness.backends.constrain)
        self.constrain_style = constrain_style
        self.flatten_tool_turns = flatten_tool_turns
        # for a server the harness started: how it died, once it has (ManagedServer.died)
        self.server_died = server_died
        # the key is read here and handed only to the transport: it is never part of a record
        key = os.environ.get(api_key_env) or "no-key"
        try:
            self.transport = Transport(
                base_url,
                api_key=key,
                timeout_s=timeout_s,
                max_response_bytes=int(max_response_mib * MIB),
                user_agent=f"repair-harness openai/{openai.__version__}",
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
        raw = await self._with_retries(lambda: self.transport.get("models"))
        try:
            return [m["id"] for m in json.loads(raw)["data"]]
        except (ValueError, KeyError, TypeError):
            raise HarnessError(f"{self.base_url}/models: the answer is not a model list: {raw[:300]!r}") from None

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def _with_retries(self, make_call: Any) -> Any:
        last: TransportError | None = None
        for attempt in range(self.max_retries + 1):
            try:
                return await make_call()
            except TransportError as exc:
                error = exc
            death = self.server_died() if self.server_died is not None else None
            if death is not None:  # no retry reaches a dead server: the run stops, saying why
                raise HarnessError(death, fatal=True) from None
            if isinstance(error, StatusError) and error.status == 401:
                raise HarnessError(
                    f"{self.base_url}: {error}; the server wants an API key: put it in "
                    f"${self.api_key_env} (or name another variable with --api-key-env)"
                ) from None
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
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": _sanitize(messages),
            "temperature": decoding.temperature,
            "max_tokens": decoding.max_tokens,
        }
        # optional keys are sent only when set: a protocol reproducing another harness's requests
        # (veriharness) must send exactly that harness's keys
        for key in ("top_p", "seed", "stream"):
            if getattr(decoding, key) is not None:
                kwargs[key] = getattr(decoding, key)
        if tools and tool_mode == "native":
            kwargs["tools"] = [t.openai() for t in tools]
            kwargs["tool_choice"] = "auto"
        kwargs.update(request_fields(decoding.constrain, self.constrain_style, tools, kwargs.get("tools")))
        start = time.perf_counter()
        resp = await self._with_retries(lambda: self._post_chat(kwargs))
        latency = time.perf_counter() - start
        if not resp.choices:
            # some servers answer 200 with {"error": {...}}: keep what they said
            said = (getattr(resp, "model_extra", None) or {}).get("error")
            detail = f": {json.dumps(said, ensure_ascii=False, default=str)[:500]}" if said else ""
            raise HarnessError(f"{self.base_url}: the server answered 200 with no choices{detail}")
        turn = self._turn(resp, latency, tools, tool_mode)
        if decoding.constrain != "none" and tool_mode == "prompt" and not turn.tool_calls:
            turn = _constrained(turn, tools)
        return turn

    async def _post_chat(self, body: dict[str, Any]) -> Any:
        """`chat.completions.create(**body)` as the server sees it, for a fraction of its CPU."""
        raw = await self.transport.post("chat/completions", _encode(body))
        try:  # a well-formed answer: pydantic-core parses and checks it in one pass
            return ChatCompletion.model_validate_json(raw)
        except ValueError:
            pass
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise HarnessError(
                f"{self.base_url}: the server answered 200 with a body that is not a JSON object: {raw[:300]!r}"
            )
        # a server's odd answer: read as the SDK reads every answer, unvalidated
        return ChatCompletion.construct(**data)

    def _turn(self, resp: Any, latency: float, tools: list[ToolSpec], tool_mode: ToolMode) -> ModelTurn:
        choice = resp.choices[0]
        # a server relays what the model wrote: a call may lack parts, and that is the model's failure
        native = [
            RawCall(getattr(c.function, "name", None), getattr(c.function, "arguments", None), getattr(c, "id", None))
            for c in choice.message.tool_calls or []
        ]
        usage = Usage(
            prompt_tokens=getattr(resp.usage, "prompt_tokens", None),
            completion_tokens=getattr(resp.usage, "completion_tokens", None),
        )
        # the server ran its tool parser: a call left in the text is one it did not accept
        turn = to_turn(
            choice.message.content,
            native_calls=native,
            usage=usage,
            finish_reason=choice.finish_reason,
            latency_s=latency,
            model_id=resp.model,
            tools=tools,
            tool_mode=tool_mode,
            text_calls=self.text_calls,
        )
        refusal = getattr(choice.message, "refusal", None)
        return turn.model_copy(update={"refusal": str(refusal)}) if refusal else turn


def _constrained(turn: ModelTurn, tools: list[ToolSpec]) -> ModelTurn:
    """A constrained prompt-mode answer the ordinary parser could not read: the call or the
    message the schema allows (harness.backends.constrain.read_answer), else as it was."""
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
