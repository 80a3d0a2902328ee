"""Constrained decoding (`--constrain json|schema`): what a request asks the server for, and what
the answer then means.

In prompt mode the answer is constrained to one JSON object: a call `{"name": <tool>,
"arguments": <its parameters>}` (one branch per tool, the tool's own JSON Schema, no extra keys),
or a message to the user `{"message": "..."}` (the tools suites ask the customer for what is
missing; without it a constrained agent could never answer in text). `read_answer` reads either
back (a call with parse mode `constrained`, a message as a plain text answer).

How each server is asked (`STYLES`):
- `llama.cpp` (llama-cpp-python's server: `local`, `gguf:`): `response_format` of type
  `json_object`, with a `schema` for `schema`; it compiles the schema to a grammar. Native tool
  mode is not constrained by it: refused at start.
- `openai` (vLLM's server, OpenAI and other endpoints): `response_format` of type `json_schema`
  with `strict: true` in prompt mode; in native mode each tool's `strict: true` (OpenAI's structured
  tool calls) and, for `json`, nothing more than the server's own tool parser.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from envs.contract import ToolSpec
from harness.serving.backends.parse import MAX_DEPTH, json_depth

Style = Literal["llama.cpp", "openai"]
STYLES: tuple[Style, ...] = ("llama.cpp", "openai")

# JSON Schema keywords each style turns into a constraint; any other keyword in a tool's schema
# (bounds on numbers, uniqueItems, not, if/then, most formats) is checked by the tool only
_SHAPE = {
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
}
ENFORCED: dict[Style, set[str]] = {
    # `pattern` is left out: llama-cpp-python 0.3 compiles `\\d` in a pattern into a grammar its
    # parser rejects, and the server then dies (SIGSEGV); patterns are dropped from what it is sent
    "llama.cpp": _SHAPE | {"prefixItems", "minItems", "maxItems", "minLength", "maxLength", "format"},
    "openai": _SHAPE | {"pattern", "format", "minimum", "maximum", "minItems", "maxItems"},
}
# the formats llama.cpp's grammar knows; another `format` is a plain string to it
LLAMA_FORMATS = {"date", "time", "date-time", "uuid"}
MESSAGE = {
    "type": "object",
    "properties": {"message": {"type": "string"}},
    "required": ["message"],
    "additionalProperties": False,
}


def output_schema(tools: list[ToolSpec], style: Style = "openai") -> dict[str, Any]:
    """One answer: a call of one of the tools, or a message to the user; each tool's schema with
    only the keywords the style enforces."""
    calls = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": enforceable(t.parameters, style)},
            "required": ["name", "arguments"],
            "additionalProperties": False,
        }
        for t in tools
    ]
    return {"anyOf": [*calls, MESSAGE]}


def request_fields(
    constrain: str, style: Style, tools: list[ToolSpec], native_tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The body fields that ask the server to constrain this answer (none for `none`).
    `native_tools`: the body's tools in native mode, where only the openai style gets (the
    llama.cpp style is refused at start): `schema` makes each one `strict`."""
    if constrain == "none":
        return {}
    if native_tools is not None:
        return {"tools": strict_tools(native_tools)} if constrain == "schema" else {}
    if constrain == "json" or not tools:
        return {"response_format": {"type": "json_object"}}
    schema = output_schema(tools, style)
    if style == "llama.cpp":
        return {"response_format": {"type": "json_object", "schema": schema}}
    return {
        "response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": True}}
    }


def strict_tools(tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Native tools with OpenAI's `strict: true` (structured tool calls)."""
    return [{**t, "function": {**t["function"], "strict": True}} for t in tools]


_NAMED = ("properties", "$defs", "definitions")  # their keys are names, whatever they are called
_NESTED = ("items", "additionalProperties", "anyOf", "oneOf", "allOf", "prefixItems")  # schemas inside


def _split(schema: Any, style: Style, where: str, dropped: list[str]) -> Any:
    """The schema with only the keywords the style enforces; each one left out is added to
    `dropped` as `where: keyword`. One walk for what is sent and for what is said of it."""
    if isinstance(schema, list):
        return [_split(s, style, where, dropped) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _NAMED and isinstance(value, dict):
            out[key] = {name: _split(sub, style, f"{where}.{name}", dropped) for name, sub in value.items()}
        elif key not in ENFORCED[style]:
            dropped.append(f"{where}: {key}")
        elif key == "format" and style == "llama.cpp" and value not in LLAMA_FORMATS:
            dropped.append(f"{where}: format {value}")
        else:
            out[key] = _split(value, style, where, dropped) if key in _NESTED else value
    return out


def enforceable(schema: Any, style: Style) -> Any:
    """The schema without the keywords the style cannot constrain."""
    return _split(schema, style, "", [])


def read_answer(text: str, tool_names: set[str]) -> tuple[str, Any] | None:
    """A constrained answer: ("message", text) or ("call", (name, arguments)); None when the text
    is neither (then the ordinary parser has its say). Read with `strict=False`: llama.cpp's JSON
    grammar lets raw control characters (a newline) into strings, which strict JSON refuses;
    the server promised this shape, and the decoder is never anything but `json.loads`."""
    try:
        data = json.loads(text, strict=False)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or json_depth(data) > MAX_DEPTH:
        return None
    if set(data) == {"message"} and isinstance(data["message"], str):
        return "message", data["message"]
    if set(data) == {"name", "arguments"} and data["name"] in tool_names and isinstance(data["arguments"], dict):
        return "call", (data["name"], data["arguments"])
    return None


def unenforced(tools: list[ToolSpec], style: Style) -> list[str]:
    """`tool.path: keyword` for every keyword of the tools' schemas the style cannot constrain."""
    dropped: list[str] = []
    for tool in tools:
        _split(tool.parameters, style, tool.name, dropped)
    return sorted(set(dropped))
