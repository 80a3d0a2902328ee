"""Reading tool calls out of a model's text answer.

Used in prompt mode (tools described in the prompt, calls written as text) and for native-mode
answers whose tool call came back as text (e.g. vLLM's hermes parser returns Qwen2.5-Coder's
fenced JSON as plain content, vLLM issue 32926).

Where a call was found decides its `parse_mode`:
  tag     inside `<tool_call>...</tool_call>` (Qwen / Hermes; a missing closing tag is tolerated)
          or after Mistral's `[TOOL_CALLS]` marker
  llama   Llama shapes: `{"name", "parameters"}`, `<|python_tag|>`, `<function=NAME>{...}</function>`
  fenced  JSON inside a markdown fence
  bare    JSON objects (or a list of them) inside prose
Tags win over everything else: when an answer holds a tag, only its tags are read.

Model output is untrusted: it is decoded with `json.JSONDecoder.raw_decode` only, never
evaluated, and anything huge, binary or nested too deeply yields an `error`, never an exception.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from envs.contract import ToolCall

# how much of a model's answer the harness reads at all (a larger one is cut, never parsed whole)
MAX_ANSWER_CHARS = 20_000
# Past this depth an argument tree is pathological for every tool we have, and deep trees can
# overflow the recursion of whatever serialises the record later.
MAX_DEPTH = 32
# Bounds the work on adversarial text: each decode attempt can scan to the end of the answer.
MAX_DECODE_ATTEMPTS = 200
_SNIPPET = 80

_TAG = re.compile(r"<tool_call>(.*?)(?:</tool_call>|(?=<tool_call>)|\Z)", re.S | re.I)
_FUNCTION_TAG = re.compile(r"<function=([\w.\-]+)>(.*?)(?:</function>|\Z)", re.S)
_FENCE = re.compile(r"```[ \t]*([\w+\-.]*)[^\n`]*\n?(.*?)(?:```|\Z)", re.S)
_OPEN = re.compile(r"[{\[]")
# special-token markers some chat templates put before their JSON calls, and the mode they imply
_PREFIXES = {"<|python_tag|>": "llama", "[TOOL_CALLS]": "tag"}
_ARG_KEYS = ("arguments", "parameters", "args", "input")
_META_KEYS = {"type", "id", "index"}


@dataclass(frozen=True)
class Parsed:
    """What `parse_tool_calls` read.

    error: why no call could be read although the text attempted one (a tag, a fence, JSON-ish
        text); None when calls were read or when the text is plain prose.
    warnings: problems beside calls that were read (a second tag that was broken, truncation).
    truncated: the text was longer than max_chars and only its head was read.
    """

    calls: list[ToolCall]
    error: str | None
    fenced: bool
    truncated: bool = False
    warnings: tuple[str, ...] = field(default=())


class _Reader:
    """Turns decoded JSON values into calls and keeps the reasons for what it could not read."""

    def __init__(self, tool_names: Collection[str] | None):
        self.tool_names = set(tool_names) if tool_names is not None else None
        self.problems: list[str] = []

    def calls(self, value: Any, mode: str, where: str) -> list[ToolCall]:
        if json_depth(value) > MAX_DEPTH:
            self.problems.append(f"{where}: JSON nested deeper than {MAX_DEPTH} levels")
            return []
        if isinstance(value, list):
            out: list[ToolCall] = []
            for i, item in enumerate(value):
                out.extend(self.calls(item, mode, f"{where} item {i}"))
            return out
        if not isinstance(value, dict):
            self.problems.append(f"{where}: expected a JSON object, got {type(value).__name__}")
            return []
        if isinstance(value.get("tool_calls"), list):
            return self.calls(value["tool_calls"], mode, where)
        call = self._one(value, mode, where)
        return [call] if call is not None else []

    def _one(self, obj: dict[str, Any], mode: str, where: str, call_id: str | None = None) -> ToolCall | None:
        if isinstance(obj.get("id"), str):
            call_id = obj["id"]
        fn = obj.get("function")
        if isinstance(fn, dict):  # OpenAI message shape: {"type": "function", "id": ..., "function": {...}}
            return self._one(fn, mode, where, call_id)
        name = obj.get("name", fn if isinstance(fn, str) else None)
        arg_key = next((k for k in _ARG_KEYS if k in obj), None)
        if name is None:
            return self._keyed_by_tool(obj, mode, where)
        if not isinstance(name, str) or not name.strip():
            self.problems.append(f"{where}: the tool name must be a non-empty string, got {_show(name)}")
            return None
        if arg_key is None:
            # {"name": "Bob", "age": 3} is data, unless "Bob" is one of the tools (flat style); a
            # known tool without arguments is a call to a tool that takes none
            rest = {k: v for k, v in obj.items() if k not in _META_KEYS | {"name", "function"}}
            if not (self.tool_names and name in self.tool_names):
                self.problems.append(
                    f'{where}: an object with "name" but no "arguments" (keys: {", ".join(list(obj)[:8])})'
                )
                return None
            return ToolCall(name=name.strip(), arguments=rest, id=call_id, parse_mode=mode)
        args = self._arguments(obj[arg_key], name, where)
        if args is None:
            return None
        if arg_key == "parameters" and mode in ("fenced", "bare"):
            mode = "llama"
        return ToolCall(name=name.strip(), arguments=args, id=call_id, parse_mode=mode)

    def _keyed_by_tool(self, obj: dict[str, Any], mode: str, where: str) -> ToolCall | None:
        # {"move": {"direction": "north"}}: only when the one key is a tool we know of
        if self.tool_names and len(obj) == 1:
            ((key, val),) = obj.items()
            if key in self.tool_names and isinstance(val, dict):
                return ToolCall(name=key, arguments=val, parse_mode=mode)
        keys = ", ".join(list(obj)[:8]) or "none"
        self.problems.append(
            f"{where}: a JSON object without a tool name (keys: {keys}); "
            'a call looks like {"name": ..., "arguments": {...}}'
        )
        return None

    def _arguments(self, raw: Any, name: str, where: str) -> dict[str, Any] | None:
        if raw is None:
            return {}
        if isinstance(raw, str):  # OpenAI style: arguments as a JSON string
            text = raw.strip() or "{}"
            try:
                raw = json.loads(text)
            except (ValueError, RecursionError) as exc:
                self.problems.append(f"{where}: the arguments of {name!r} are a string that is not JSON ({exc})")
                return None
            if json_depth(raw) > MAX_DEPTH:
                self.problems.append(f"{where}: JSON nested deeper than {MAX_DEPTH} levels")
                return None
        if not isinstance(raw, dict):
            self.problems.append(f"{where}: the arguments of {name!r} must be a JSON object, got {_show(raw)}")
            return None
        return raw


def deeper_than(text: str | bytes, value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value`, decoded from `text`, nests deeper than `limit`: a tree can be no deeper than
    the brackets its text opens, so the walk runs only where they are more than `limit` (counting
    is C-speed; the walk is a twentieth of a call's CPU)."""
    opens = text.count(b"{") + text.count(b"[") if isinstance(text, bytes) else text.count("{") + text.count("[")
    return opens > limit and json_depth(value, limit) > limit


def json_depth(value: Any, limit: int = MAX_DEPTH) -> int:
    """Depth of a decoded JSON tree, iteratively (the tree may be deeper than the stack); the walk
    stops at the first level past `limit`."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, d = stack.pop()
        if isinstance(node, dict | list):
            deepest = max(deepest, d)
            if deepest > limit:
                return deepest
            stack.extend((child, d + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _SNIPPET else text[:_SNIPPET] + "..."


def _jsonish_at(text: str, i: int) -> bool:
    """Does a JSON object (or a list of objects) plausibly start at text[i]?"""
    j = i + 1
    while j < len(text) and text[j] in " \t\r\n":
        j += 1
    if j >= len(text):
        return False
    return text[j] in "\"'" if text[i] == "{" else text[j] == "{"


def _scan(text: str, where: str) -> tuple[list[Any], list[str], bool]:
    """Every JSON object or list of objects in `text`, left to right, and why others failed.

    Returns (values, failures, attempted): attempted says whether anything JSON-ish was seen.
    """
    decoder = json.JSONDecoder()
    values: list[Any] = []
    failures: list[str] = []
    attempted = False
    pos, attempts = 0, 0
    while (m := _OPEN.search(text, pos)) is not None:
        i = m.start()
        if not _jsonish_at(text, i):
            pos = i + 1
            continue
        attempted = True
        attempts += 1
        if attempts > MAX_DECODE_ATTEMPTS:
            failures.append(f"{where}: gave up after {MAX_DECODE_ATTEMPTS} JSON-like fragments")
            break
        try:
            value, end = decoder.raw_decode(text, i)
        except RecursionError:
            failures.append(f"{where}: JSON nested too deeply to read")
            break
        except ValueError as exc:  # JSONDecodeError, or an integer with too many digits
            failures.append(_broken(text, i, exc, where))
            pos = i + 1
            continue
        values.append(value)
        pos = end
    return values, failures, attempted


def _broken(text: str, i: int, exc: ValueError, where: str) -> str:
    snippet = text[i : i + _SNIPPET].replace("\n", " ")
    reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
    hint = " (JSON needs double quotes)" if text[i + 1 :].lstrip().startswith("'") else ""
    return f"{where}: broken JSON at character {i}: {reason}{hint}: {snippet!r}"


def _read(text: str, mode: str, where: str, reader: _Reader) -> tuple[list[ToolCall], list[str], bool]:
    values, failures, attempted = _scan(text, where)
    calls: list[ToolCall] = []
    for value in values:
        calls.extend(reader.calls(value, mode, where))
    return calls, failures, attempted


def _looks_binary(text: str) -> bool:
    controls = sum(1 for c in text if (ord(c) < 32 and c not in "\t\n\r") or c == "\ufffd")
    return "\x00" in text or controls > max(8, len(text) // 10)


def _result(
    calls: list[ToolCall], problems: list[str], fenced: bool, truncated: bool, warnings: list[str], attempted: bool
) -> Parsed:
    if calls:
        return Parsed(calls, None, fenced, truncated, tuple(warnings + problems))
    error = None
    if attempted:
        error = "; ".join(problems[:3]) or "the answer looks like a tool call but none could be read"
    if truncated:
        error = "; ".join(filter(None, [error, warnings[0]]))
    return Parsed([], error, fenced, truncated, tuple(warnings))


def parse_tool_calls(text: str, tool_names: Collection[str] | None = None, max_chars: int = MAX_ANSWER_CHARS) -> Parsed:
    """Read the tool calls in a model's text answer. Never raises on any input text.

    tool_names: the tools offered. A call naming another tool is still returned (the env rejects
    it as an unknown tool); the names only let flat `{"name": "move", "direction": ...}` and
    keyed `{"move": {...}}` objects count as calls.
    """
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    elif not isinstance(text, str):
        text = "" if text is None else str(text)
    warnings: list[str] = []
    truncated = len(text) > max_chars
    if truncated:
        warnings.append(f"the answer is {len(text)} characters; only the first {max_chars} were read")
        text = text[:max_chars]
    parsed = _parse(text, tool_names, truncated, warnings)
    if (parsed.calls or parsed.error) and _looks_binary(text):
        # a call attempted in text no model should write (NULs, control characters): none is
        # read from it. Binary prose that attempts no call is prose: the model made no call.
        return Parsed([], "the answer looks binary (control characters); no tool call read", False, truncated)
    return parsed


def _parse(text: str, tool_names: Collection[str] | None, truncated: bool, warnings: list[str]) -> Parsed:
    fenced = "```" in text
    reader = _Reader(tool_names)

    tags = _TAG.findall(text)
    if tags:
        calls: list[ToolCall] = []
        problems: list[str] = []
        for n, body in enumerate(tags, 1):
            body = _unfence(body)
            got, failures, attempted = _read(body, "tag", f"<tool_call> {n}", reader)
            calls.extend(got)
            problems.extend(failures)
            if not attempted:
                problems.append(f"<tool_call> {n} holds no JSON object: {body.strip()[:_SNIPPET]!r}")
        return _result(calls, problems + reader.problems, fenced, truncated, warnings, True)

    calls, problems, attempted = [], [], False
    for name, body in _FUNCTION_TAG.findall(text):
        attempted = True
        args = reader._arguments(body.strip() or "{}", name, f"<function={name}>")
        if args is not None:
            calls.append(ToolCall(name=name, arguments=args, parse_mode="llama"))
    if calls or attempted:
        return _result(calls, reader.problems, fenced, truncated, warnings, True)

    for prefix, mode in _PREFIXES.items():
        if prefix in text:
            got, failures, _ = _read(text.split(prefix, 1)[1], mode, prefix, reader)
            if got:
                return _result(got, failures, fenced, truncated, warnings, True)
            problems.extend(failures)
            attempted = True

    for lang, body in _FENCE.findall(text):
        got, failures, seen = _read(body, "fenced", f"```{lang} fence", reader)
        calls.extend(got)
        problems.extend(failures)
        attempted = attempted or seen
    if calls:
        return _result(calls, problems, fenced, truncated, warnings, True)

    got, failures, seen = _read(_FENCE.sub(" ", text), "bare", "answer", reader)
    return _result(got, problems + failures + reader.problems, fenced, truncated, warnings, attempted or seen)


def _unfence(body: str) -> str:
    m = _FENCE.search(body)
    return m.group(2) if m else body
