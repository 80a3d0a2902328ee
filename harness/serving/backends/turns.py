"""The one place a server's answer becomes a `ModelTurn`: native calls, calls in the text, and
what `--text-calls` does with a native-mode call that came back as text.

Both the OpenAI-compatible backend (a server that ran its own tool parser) and the in-process
vLLM backend (no server-side parser: `native_text_modes` stands in for it) call `to_turn`.

The policy:
- Calls the server returned as structured tool calls are `native`; one whose arguments are not a
  JSON object spoils the turn (executing only its siblings would change the plan). The text
  beside them is not searched for more calls. Their names and arguments are read up to the cap
  on a text answer (MAX_ANSWER_CHARS in all): a turn whose calls are larger has none read (one
  5 MB argument would otherwise be copied into the transcript and every later request).
- Otherwise the text is parsed. In prompt mode every call keeps its parse mode.
- In native mode a call in a format of `native_text_modes` (what the family's server-side parser
  would have accepted) is `native`; any other call came back as text: `text_calls="parse"` keeps
  it as `text_<mode>`, `text_calls="violation"` drops every call of the turn and says why (one
  text call spoils the turn, as one unreadable native call does).
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from envs.contract import ToolCall, ToolSpec
from harness.redact import cut
from harness.serving.backends.base import ToolMode
from harness.serving.backends.parse import MAX_ANSWER_CHARS, MAX_DEPTH, deeper_than, json_depth, parse_tool_calls
from harness.types import ModelTurn, Usage

# the words of a native call's parse error whose arguments are no JSON object (harness.serving.preflight reads them)
BAD_ARGUMENTS = "arguments are not valid JSON"
# the parse modes that vLLM's server-side parser of each family turns into tool calls
NATIVE_TEXT_MODES: dict[str, frozenset[str]] = {
    "hermes": frozenset({"tag"}),
    "llama3_json": frozenset({"llama", "bare"}),
    "mistral": frozenset({"tag"}),
}


def native_text_modes(tool_parser: str) -> frozenset[str]:
    """What a family's parser reads; unknown parsers are taken to read `<tool_call>` tags."""
    return NATIVE_TEXT_MODES.get(tool_parser, frozenset({"tag"}))


@dataclass(frozen=True)
class RawCall:
    """A tool call as the server returned it (OpenAI wire form: arguments as a JSON string)."""

    # what the server sent: a call may lack a name, or carry a non-string one (_read_native names it)
    name: object
    # a JSON string on the wire; some servers send the object itself
    arguments: Any
    id: str | None = None


def to_turn(
    text: str | None,
    *,
    native_calls: list[RawCall] | None = None,
    usage: Usage,
    finish_reason: str | None,
    latency_s: float,
    model_id: str | None,
    tools: list[ToolSpec],
    tool_mode: ToolMode,
    text_calls: str,
    native_text_modes: Collection[str] = frozenset(),
    reading: str = "harness",
) -> ModelTurn:
    text = text or ""
    turn = ModelTurn(
        text=cut(text, MAX_ANSWER_CHARS),
        usage=usage,
        latency_s=latency_s,
        finish_reason=finish_reason,
        truncated=len(text) > MAX_ANSWER_CHARS,
        model_id=model_id,
    )
    if not tools or native_calls or reading == "bfcl":
        turn.fenced = "```" in turn.text
        if tools and native_calls:
            turn.tool_calls, turn.parse_error = _read_native(native_calls, strict=reading == "bfcl")
        return turn
    parsed = parse_tool_calls(text, [t.name for t in tools], max_chars=MAX_ANSWER_CHARS)
    turn.fenced = parsed.fenced
    if tool_mode == "prompt":
        turn.tool_calls, turn.parse_error = parsed.calls, parsed.error
        return turn
    calls, as_text = [], []
    for n, c in enumerate(parsed.calls):
        if c.parse_mode in native_text_modes:
            calls.append(c.model_copy(update={"parse_mode": "native", "id": c.id or f"call_{n}"}))
        else:
            as_text.append(c.parse_mode)
            calls.append(c.model_copy(update={"parse_mode": f"text_{c.parse_mode}"}))
    if as_text and text_calls == "violation":
        turn.parse_error = f"the tool call came back as {as_text[0]} text, not as a native tool call"
        return turn
    turn.tool_calls, turn.parse_error = calls, parsed.error
    return turn


def _read_native(raw: list[RawCall], strict: bool = False) -> tuple[list[ToolCall], str | None]:
    """Model output, however hostile, ends as calls or as a parse error (the agent's failure,
    `unparseable_call`, as prompt mode scores the same text), never as an exception. `strict`:
    BFCL's FC decoder (`convert_to_function_call`): a string goes through `json.loads` as it is
    ("" fails, where the harness reads it as {}), anything else but an object fails."""
    size = sum(_chars(c.name) + _chars(c.arguments) for c in raw)
    if size > MAX_ANSWER_CHARS:
        return [], (
            f"the tool calls' names and arguments are {size:,} characters, over the {MAX_ANSWER_CHARS:,} "
            "the harness reads of an answer; no call was read"
        )
    calls, errors = [], []
    for c in raw:
        name = c.name if isinstance(c.name, str) else repr(c.name)
        try:
            if isinstance(c.arguments, dict):
                args, deep = c.arguments, json_depth(c.arguments) > MAX_DEPTH
            elif strict and not isinstance(c.arguments, str):
                raise ValueError(f"arguments are {type(c.arguments).__name__}, not a JSON string")
            else:
                text = c.arguments if strict else c.arguments or "{}"
                args = json.loads(text)
                deep = isinstance(args, dict) and deeper_than(text, args)
            if not isinstance(args, dict):
                raise ValueError("arguments are not a JSON object")
            if deep:
                raise ValueError(f"arguments nested deeper than {MAX_DEPTH} levels")
            calls.append(ToolCall(name=name, arguments=args, id=c.id, parse_mode="native"))
        except (ValueError, TypeError, RecursionError) as exc:
            errors.append(f"tool call {name[:100]!r}: {BAD_ARGUMENTS} ({str(exc)[:200]})")
    return ([] if errors else calls), "; ".join(errors) or None


def _chars(value: Any) -> int:
    """A call part's length as the wire carries it (the JSON of one sent as an object)."""
    if value is None or isinstance(value, str):
        return len(value or "")
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str))
    except (ValueError, TypeError, RecursionError):
        return MAX_ANSWER_CHARS + 1
