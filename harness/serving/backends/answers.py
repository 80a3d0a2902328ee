"""What a model server's answer body may hold: one bounded JSON reader for every answer, and the
readers of the shapes the harness asks for (a chat completion, a model list, an error's message,
token usage).

A server is untrusted the way a model is: its body is read by `read_json` only (orjson, whose
depth limit is 1,024; the standard library for what orjson refuses and JSON allows a server to
send: lone surrogates, NaN), and nothing deeper than MAX_DEPTH levels is handed on, so no later
walk of it (a message, a record, the redactor) can exhaust the stack. Every fault is a
`Malformed` whose message names the field and what the server put there
(`choices[0].message is null`), never a Python exception from inside a reader.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

import orjson

from harness.redact import cut
from harness.serving.backends.parse import MAX_DEPTH as MAX_ARGUMENT_DEPTH
from harness.serving.backends.parse import deeper_than
from harness.serving.backends.turns import RawCall

# a completion is 8 levels deep around the arguments of a tool call sent as an object, which the
# turn reader bounds at parse.MAX_DEPTH: twice that is room for any server's extra fields
MAX_DEPTH = 2 * MAX_ARGUMENT_DEPTH
# more tokens than any model's context holds in one call (the largest are 10 million): a count
# above it is a server's fault, as a negative one is
MAX_TOKENS_PER_CALL = 100_000_000
_SHOWN = 200


class Malformed(ValueError):
    """A body that is not what the server was asked for; the message says what is wrong with it."""


def read_json(body: bytes) -> Any:
    """The JSON value of a body, at most MAX_DEPTH levels deep, or Malformed saying why not."""
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc) or "recursion" in str(exc).lower():
            raise Malformed(f"the body is JSON nested deeper than {MAX_DEPTH} levels") from None
        try:  # what orjson refuses that Python's json reads: lone surrogates, NaN, Infinity
            value = json.loads(body)
        except RecursionError:
            raise Malformed(f"the body is JSON nested deeper than {MAX_DEPTH} levels") from None
        except ValueError as exc2:  # JSONDecodeError, UnicodeDecodeError
            raise Malformed(f"the body is not JSON ({_reason(exc2)}): {shown(body)}") from None
    if deeper_than(body, value, MAX_DEPTH):
        raise Malformed(f"the body is JSON nested deeper than {MAX_DEPTH} levels")
    return value


def _reason(exc: ValueError) -> str:
    return exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)[:100]


def shown(body: bytes) -> str:
    """The start of a body, as a bytes literal: what a message quotes of it."""
    return repr(body[:_SHOWN]) + ("..." if len(body) > _SHOWN else "")


_KINDS = {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number", bool: "a boolean"}


def _kind(value: Any) -> str:
    """A JSON value's kind as a message says it."""
    return "null" if value is None else _KINDS.get(type(value), f"a {type(value).__name__}")


def _object(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Malformed(f"{where} is {_kind(value)}, not an object")
    return value


def _string(value: Any, where: str) -> str | None:
    """A string field that may be null."""
    if value is not None and not isinstance(value, str):
        raise Malformed(f"{where} is {_kind(value)}, not a string")
    return value


def error_message(body: bytes) -> str:
    """What a server said with an error status: the `message` of an OpenAI-style error body
    (`{"error": {"message": ...}}`), else the start of the body as text; never an exception."""
    try:
        said: Any = read_json(body)
        said = said.get("error", said) if isinstance(said, dict) else said
        said = said.get("message", said) if isinstance(said, dict) else said
    except Malformed as exc:
        said = str(exc) if "nested deeper" in str(exc) else body[:1000].decode("utf-8", errors="replace")
    text = cut(str(said), 300).strip()
    return text or "(empty body)"


def model_ids(body: bytes) -> list[str]:
    """The ids of a /v1/models answer (`{"data": [{"id": ...}, ...]}`)."""
    try:
        data = _object(read_json(body), "the body")
        rows = data.get("data")
        if not isinstance(rows, list):
            raise Malformed(f"data is {_kind(rows)}, not an array")
        ids = []
        for n, row in enumerate(rows):
            ident = _object(row, f"data[{n}]").get("id")
            if not isinstance(ident, str):
                raise Malformed(f"data[{n}].id is {_kind(ident)}, not a string")
            ids.append(ident)
        return ids
    except Malformed as exc:
        raise Malformed(f"not a model list: {exc}: {shown(body)}") from None


@dataclass(frozen=True)
class Completion:
    """The parts of a chat completion a turn is made of (`harness.serving.backends.turns.to_turn`)."""

    content: str | None
    calls: list[RawCall]
    finish_reason: str | None
    refusal: str | None
    model: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    # the usage the server sent that no call can have (then both counts are None), else None
    usage_fault: str | None = None
    # choices[0].message as the server sent it
    message: dict[str, Any] | None = None


def completion(body: bytes) -> Completion:
    """A chat completion's first choice, its usage and model; Malformed names the field at fault.
    A tool call's name and arguments are the model's (the turn reader judges them); the structure
    around them is the server's."""
    data = _object(read_json(body), "the body")
    choices = data.get("choices")
    if not choices:
        # some servers answer 200 with {"error": {...}}: keep what they said
        said = data.get("error")
        detail = f": {cut(json.dumps(said, ensure_ascii=False, default=str), 500)}" if said else ""
        raise Malformed(f"no choices{detail}")
    if not isinstance(choices, list):
        raise Malformed(f"choices is {_kind(choices)}, not an array")
    choice = _object(choices[0], "choices[0]")
    message = _object(choice.get("message"), "choices[0].message")
    raw = message.get("tool_calls")
    if raw is not None and not isinstance(raw, list):
        raise Malformed(f"choices[0].message.tool_calls is {_kind(raw)}, not an array")
    calls = []
    for n, call in enumerate(raw or []):
        where = f"choices[0].message.tool_calls[{n}]"
        fn = _object(_object(call, where).get("function"), f"{where}.function")
        calls.append(RawCall(fn.get("name"), fn.get("arguments"), _string(call.get("id"), f"{where}.id")))
    prompt, completion_, fault = usage(data.get("usage"))
    return Completion(
        content=_string(message.get("content"), "choices[0].message.content"),
        calls=calls,
        finish_reason=_string(choice.get("finish_reason"), "choices[0].finish_reason"),
        refusal=_string(message.get("refusal"), "choices[0].message.refusal"),
        model=_string(data.get("model"), "model"),
        prompt_tokens=prompt,
        completion_tokens=completion_,
        usage_fault=fault,
        message=message,
    )


def usage(value: Any) -> tuple[int | None, int | None, str | None]:
    """(prompt_tokens, completion_tokens, fault) of a completion's `usage`. Absent counts are None
    (unknown, never 0). A count no call can have (negative, not an integer, over
    MAX_TOKENS_PER_CALL) makes both None, and `fault` says what the server sent: a server that
    sends one impossible count is not believed for the other."""
    if value is None:
        return None, None, None
    if not isinstance(value, dict):
        return None, None, f"usage {_kind(value)}, not an object"
    counts: list[int | None] = []
    for name in ("prompt_tokens", "completion_tokens"):
        count = value.get(name)
        if count is None:
            counts.append(None)
            continue
        if isinstance(count, float) and math.isfinite(count) and count.is_integer():
            count = int(count)  # 300.0: the count, as pydantic's lax int read it
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= MAX_TOKENS_PER_CALL:
            return None, None, f"{name} {json.dumps(count, default=str)[:40]}"
        counts.append(count)
    return counts[0], counts[1], None
