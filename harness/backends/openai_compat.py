"""Any OpenAI-compatible endpoint (vLLM, llama.cpp server, hosted APIs), with the `openai` SDK's types.

Chat calls are posted by `http1.Http1Client` (h11 over asyncio's sockets): the body is built once
as JSON and written by the call itself, the answer is read into the SDK's `ChatCompletion` and
every failure is raised as the SDK's exception, so the retries below treat them as they treat the
SDK's own. The SDK's `create()` walks each body against its TypedDicts and runs it through httpx's
middleware: on 2 cores that is 3-10 ms a call, more than the rest of an episode and most of what a
fast server leaves (benchmarks/throughput.py). Why not aiohttp: see `http1`. The SDK itself still
lists the models and streams (a `stream: true` request).

Native mode sends the tools through the API (`tool_choice="auto"`: llama.cpp's server reads an
omitted tool_choice as "none"). Prompt mode describes the tools in the system message and reads
calls out of the text with our own parser. Transient failures (429, 5xx, timeouts, connection
errors) are retried with exponential backoff; after that the call raises HarnessError.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import urllib.request
from typing import Any, Callable
from urllib.parse import urlsplit

import openai
import orjson
from openai.types.chat import ChatCompletion

from harness import defaults
from harness.backends.base import ToolMode
from harness.errors import HarnessError
from harness.backends.http1 import Http1Client, HttpError, HttpTimeout
from harness.backends.prompt_tools import with_tools_prompt
from harness.backends.turns import RawCall, to_turn
from harness.types import ModelTurn, Usage
from envs.contract import Decoding, ToolSpec

try:  # the HTTP package of the SDK's client: its responses are what the SDK's errors carry
    import httpx2 as _sdk_http
except ImportError:  # SDKs before 3.x
    import httpx as _sdk_http  # type: ignore[no-redef]

_RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


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
                f'<tool_call>{{"name": {json.dumps(c["function"]["name"])}, "arguments": {c["function"]["arguments"]}}}</tool_call>'
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


def _env_proxy(url: str) -> str | None:
    """The proxy the environment names for `url` (HTTP(S)_PROXY, NO_PROXY), as httpx reads it."""
    parts = urlsplit(url)
    if urllib.request.proxy_bypass_environment(parts.hostname or ""):
        return None
    return urllib.request.getproxies_environment().get(parts.scheme)


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
    ):
        self.base_url, self.model = base_url, model
        self.max_retries, self.backoff_s, self.text_calls = max_retries, backoff_s, text_calls
        self.api_key_env = api_key_env
        self.flatten_tool_turns = flatten_tool_turns
        # for a server the harness started: how it died, once it has (ManagedServer.died)
        self.server_died = server_died
        # the key is read here and handed only to the client: it is never part of a record
        key = os.environ.get(api_key_env) or "no-key"
        self.client = openai.AsyncOpenAI(base_url=base_url, api_key=key, timeout=timeout_s, max_retries=0)
        self._chat_url = f"{base_url.rstrip('/')}/chat/completions"
        self._headers = [("Authorization", f"Bearer {key}"), ("Content-Type", "application/json"), ("Accept", "application/json")]
        # the environment's proxy is looked up once, here
        try:
            self._http = Http1Client(self._chat_url, timeout_s, proxy=_env_proxy(self._chat_url),
                                     user_agent=f"repair-harness openai/{openai.__version__}")
        except ValueError as exc:
            raise HarnessError(f"{base_url}: {exc}") from None

    def for_episode(self, env: Any) -> "OpenAIBackend":
        """A model plays every episode as it is: the env is never shown to it."""
        return self

    async def model_id(self) -> str | None:
        ids = await self.served_models()
        return self.model if self.model in ids else (ids[0] if ids else None)

    async def served_models(self) -> list[str]:
        page = await self._with_retries(lambda: self.client.models.list())
        return [m.id for m in page.data]

    async def aclose(self) -> None:
        await self._http.aclose()
        await self.client.close()

    async def _with_retries(self, make_call: Any) -> Any:
        last: Exception | None = None
        for attempt in range(self.max_retries + 1):
            try:
                return await make_call()
            except _RETRYABLE as exc:
                last = exc
                death = self.server_died() if self.server_died is not None else None
                if death is not None:  # no retry reaches a dead server: the run stops, saying why
                    raise HarnessError(death, fatal=True) from None
                if attempt < self.max_retries:
                    await asyncio.sleep(self._delay(exc, attempt))
            except openai.AuthenticationError as exc:
                raise HarnessError(
                    f"{self.base_url}: HTTP 401: {exc.message}; the server wants an API key: put it in "
                    f"${self.api_key_env} (or name another variable with --api-key-env)"
                ) from exc
            except openai.APIStatusError as exc:
                raise HarnessError(f"{self.base_url}: HTTP {exc.status_code}: {exc.message}") from exc
        fatal = isinstance(last, openai.APIConnectionError) and not isinstance(last, openai.APITimeoutError)
        raise HarnessError(f"{self.base_url}: gave up after {self.max_retries + 1} attempts: {type(last).__name__}: {last}", fatal=fatal)

    def _delay(self, exc: Exception, attempt: int) -> float:
        delay = self.backoff_s * (2**attempt)
        response = getattr(exc, "response", None)
        if response is not None:
            try:
                delay = max(delay, float(response.headers.get("retry-after", 0)))
            except ValueError:
                pass
        return min(delay, 30.0)

    async def generate(self, messages: list[dict[str, Any]], tools: list[ToolSpec], decoding: Decoding, tool_mode: ToolMode) -> ModelTurn:
        if tools and tool_mode == "prompt":
            messages = with_tools_prompt(messages, tools)
        if self.flatten_tool_turns:
            messages = _flatten_tool_turns(messages)
        kwargs: dict[str, Any] = {
            "model": self.model, "messages": _sanitize(messages), "temperature": decoding.temperature,
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
        start = time.perf_counter()
        resp = await self._with_retries(lambda: self._post_chat(kwargs))
        latency = time.perf_counter() - start
        if not resp.choices:
            # some servers answer 200 with {"error": {...}}: keep what they said
            said = (getattr(resp, "model_extra", None) or {}).get("error")
            detail = f": {json.dumps(said, ensure_ascii=False, default=str)[:500]}" if said else ""
            raise HarnessError(f"{self.base_url}: the server answered 200 with no choices{detail}")
        return self._turn(resp, latency, tools, tool_mode)

    async def _post_chat(self, body: dict[str, Any]) -> Any:
        """`chat.completions.create(**body)` as the server sees it, for a fraction of its CPU."""
        if body.get("stream"):
            return await self.client.chat.completions.create(**body)
        try:
            status, headers, raw = await self._http.post(_encode(body), self._headers)
        except HttpTimeout as exc:
            raise openai.APITimeoutError(request=self._request()) from exc
        except ValueError as exc:  # every call would fail alike: the run stops
            raise HarnessError(f"{self.base_url}: {exc}", fatal=True) from None
        except HttpError as exc:
            error = openai.APIConnectionError(request=self._request())
            error.message = f"{error.message} ({exc})"
            raise error from exc
        if status >= 400:
            reply = _sdk_http.Response(status, headers=headers, content=raw, request=self._request())
            raise self.client._make_status_error_from_response(reply)
        try:  # a well-formed answer: pydantic-core parses and checks it in one pass
            return ChatCompletion.model_validate_json(raw)
        except ValueError:
            pass
        try:
            data = json.loads(raw)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise HarnessError(f"{self.base_url}: the server answered {status} with a body that is not a JSON object: "
                               f"{raw[:300]!r}")
        # a server's odd answer: read as the SDK reads every answer, unvalidated
        return ChatCompletion.construct(**data)

    def _request(self) -> Any:
        return _sdk_http.Request("POST", self._chat_url)

    def _turn(self, resp: Any, latency: float, tools: list[ToolSpec], tool_mode: ToolMode) -> ModelTurn:
        choice = resp.choices[0]
        # a server relays what the model wrote: a call may lack parts, and that is the model's failure
        native = [RawCall(getattr(c.function, "name", None), getattr(c.function, "arguments", None), getattr(c, "id", None))
                  for c in choice.message.tool_calls or []]
        usage = Usage(
            prompt_tokens=getattr(resp.usage, "prompt_tokens", None),
            completion_tokens=getattr(resp.usage, "completion_tokens", None),
        )
        # the server ran its tool parser: a call left in the text is one it did not accept
        return to_turn(choice.message.content, native_calls=native, usage=usage, finish_reason=choice.finish_reason,
                       latency_s=latency, model_id=resp.model, tools=tools, tool_mode=tool_mode,
                       text_calls=self.text_calls)
