"""A call checked against BFCL's function docs before it runs: a rejected call is not executed.

Unknown tool, unknown argument, missing required argument, wrong type (BFCL's type names), and a
value outside an enum that the docs state only in a description (`[Enum]: [...]`, `[Enum]: a, b`,
`Options are: a, b.`, `Here are the options: a, b`). Where BFCL's own ground truth passes a type or
a value the docs do not list (`close_ticket(ticket_id='ticket_001')` for an integer), that is
accepted too: the table of what the ground truth passes is read from the four categories once.
"""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from typing import Any

from envs.bfcl import data
from envs.bfcl.backends import functions
from envs.bfcl.calls import parse
from envs.contract import ToolCall, Violation

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "float": (float, int),
    "boolean": (bool,),
    "array": (list,),
    "tuple": (list,),
    "dict": (dict,),
}
_CODES = {
    "string": "string_type",
    "integer": "int_type",
    "float": "float_type",
    "boolean": "bool_type",
    "array": "list_type",
    "tuple": "list_type",
    "dict": "dict_type",
}
_ENUM = re.compile(r"(?:\[Enum\]:|Options are:|Here are the options:)\s*(.+?)\s*$")


def type_name(value: Any) -> str:
    for name, kinds in (
        ("boolean", (bool,)),
        ("integer", (int,)),
        ("float", (float,)),
        ("string", (str,)),
        ("array", (list,)),
        ("dict", (dict,)),
    ):
        if isinstance(value, kinds):
            return name
    return "null" if value is None else type(value).__name__


def _fits(value: Any, kind: str | None) -> bool:
    """Whether a value has the doc's type (no type, an unknown one, or null: nothing to check);
    a bool is no integer here, though Python says it is."""
    if kind not in _TYPES or value is None:
        return True
    if isinstance(value, bool):
        return kind == "boolean"
    return isinstance(value, _TYPES[kind])


def enum_of(prop: dict[str, Any]) -> list[str] | None:
    if isinstance(prop.get("enum"), list):
        return [str(v) for v in prop["enum"]]
    m = _ENUM.search(prop.get("description", ""))
    if m is None:
        return None
    text = m.group(1)
    if text.startswith("["):
        try:
            return [str(v) for v in json.loads(text)]
        except ValueError:
            return None
    return [v.strip() for v in text.rstrip(".").split(",") if v.strip()]


@functools.lru_cache(maxsize=1)
def ground_truth_passes() -> dict[tuple[str, str], set[Any]]:
    """(function, argument) -> the type names and string values BFCL's ground truth passes."""
    by_name = functions(list(data.CLASSES))
    seen: dict[tuple[str, str], set[Any]] = defaultdict(set)
    for category in data.CATEGORIES:
        for entry_id in data.entry_ids(category):
            for turn in data.entry(category, entry_id)["ground_truth"]:
                for text in turn:
                    call = parse(text, by_name.__getitem__)
                    for k, v in call.arguments.items():
                        seen[(call.name, k)].add(type_name(v))
                        for item in v if isinstance(v, list) else [v]:
                            if isinstance(item, str):
                                seen[(call.name, k)].add(("value", item))
    return dict(seen)


def check(call: ToolCall, doc: dict[str, Any] | None, tools: list[str]) -> Violation | None:
    """The first way the call breaks its doc, or None."""
    if doc is None:
        return Violation.unknown_tool(call.name, tools)
    params = doc["parameters"]
    props: dict[str, Any] = params.get("properties", {})
    for name in call.arguments:
        if name not in props:
            return Violation.unexpected_argument(call.name, name, sorted(props))
    for name in params.get("required", []):
        if name not in call.arguments:
            return Violation.missing_argument(call.name, name)
    passes = ground_truth_passes()
    for name, value in call.arguments.items():
        prop, gold = props[name], passes.get((call.name, name), set())
        kind = prop.get("type")
        if not _fits(value, kind) and type_name(value) not in gold:
            return Violation.wrong_type(_CODES[kind], call.name, name, value, kind, type_name(value))
        allowed = enum_of(prop) or enum_of(prop.get("items", {}))
        if allowed:
            for item in value if isinstance(value, list) else [value]:
                if str(item) not in allowed and ("value", item) not in gold:
                    return Violation.not_an_option(call.name, name, item, allowed)
    return None
