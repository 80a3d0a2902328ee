"""Typed tools for the step protocol, derived from a game's command templates.

Templates such as `take {o}`, `take {o} from {c}`, `go east`, `look` become one tool per verb:
`take(object, from?)`, `go(direction)`, `look()`. Each tool has a pydantic input model; its
validators check every argument against the current game state (the admissible commands), so a
rejected call says which argument is wrong and which values it could take right now.
Arguments are normalised before the check (case, spacing, a leading "the").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, create_model, field_validator, model_validator
from pydantic.config import JsonDict
from pydantic_core import PydanticCustomError

from envs.contract import ToolSpec
from envs.schema import model_schema
from envs.validation import LISTING_WORDING, TypedTool, context_of

MAX_ARG_CHARS = 200
# TextWorld's type letters in command templates
_KINDS = {
    "o": "portable object",
    "c": "container",
    "s": "supporter",
    "d": "door",
    "k": "key",
    "f": "food item",
    "t": "thing",
    "r": "room",
}
# a verb whose templates are fixed words ("go east") gets one enumerated argument of this name
_LITERAL_ARG = {"go": "direction"}
_SLOT = re.compile(r"^\{(\w+)\}$")


@dataclass
class Tool(TypedTool):
    """One verb of the game. A rejected call becomes a Violation in `envs.validation`; the step
    protocol words pydantic's errors for a player, names the first error only, quotes nothing for
    a missing argument, and cuts long arguments as the schema does."""

    wording = {
        **LISTING_WORDING,
        "missing": "argument missing",
        "extra_forbidden": "unknown argument",
        "invalid_action": "not possible here",
    }
    count_more = False
    quote_call_when_missing = False
    observed_chars = MAX_ARG_CHARS

    name: str
    args: list[str] = field(default_factory=list)  # argument names, in command order
    required: set[str] = field(default_factory=set)
    kinds: dict[str, list[str]] = field(default_factory=dict)
    literals: list[str] = field(default_factory=list)
    patterns: list[re.Pattern[str]] = field(default_factory=list)
    forms: list[str] = field(default_factory=list)  # the templates with named slots, for the description
    model: type[BaseModel] | None = None

    def candidates(self, admissible: list[str]) -> list[dict[str, str]]:
        """The admissible commands of this verb, as argument dicts, in the game's order."""
        out = []
        for command in admissible:
            for pattern in self.patterns:
                m = pattern.match(command)
                if m:
                    out.append({k: v for k, v in m.groupdict().items() if v is not None})
                    break
        return out

    def command(self, args: dict[str, str]) -> str:
        words = [self.name]
        for i, name in enumerate(self.args):
            if args.get(name) is not None:
                words += [args[name]] if i == 0 else [name, args[name]]
        return " ".join(words)

    def choices(self, arg: str, args: dict[str, Any], admissible: list[str]) -> list[str]:
        """The values `arg` could take now, given the arguments before it."""
        head = self.args[0]
        cands = self.candidates(admissible)
        if arg != head:
            cands = [c for c in cands if c.get(head) == args.get(head)]
        return list(dict.fromkeys(c[arg] for c in cands if arg in c))

    def allowed(self, field: str, arguments: dict[str, Any], context: dict[str, Any]) -> list[str]:
        return self.choices(field, arguments, context["admissible"])

    def spec(self) -> ToolSpec:
        schema: dict[str, Any] = model_schema(self.model) if self.model else {"type": "object", "properties": {}}
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
            prop.pop("default", None)
            if "anyOf" in prop:  # an optional argument: a string the model may leave out
                prop.update(next(b for b in prop.pop("anyOf") if b.get("type") == "string"))
        desc = "Game command " + " or ".join(f"`{f}`" for f in self.forms) + "."
        return ToolSpec(name=self.name, description=desc, parameters=schema)


def normalise(value: str) -> str:
    text = " ".join(value.split()).casefold()
    return text[4:] if text.startswith("the ") else text


def _check(arg: str, head: str) -> Callable[[type[BaseModel], str | None, ValidationInfo], str | None]:
    def check(cls: type[BaseModel], value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        context = context_of(info)
        tool: Tool = context["tool"]
        admissible: list[str] = context["admissible"]
        args = {tool.args[int(k[1:])]: v for k, v in info.data.items()}
        if arg != head and head not in args:
            return value  # the first argument already failed; that is the error to report
        allowed = tool.choices(arg, args, admissible)
        by_norm = {normalise(a): a for a in allowed}
        if normalise(value) not in by_norm:
            raise PydanticCustomError(
                "invalid_action",
                "not possible here",
                {"field": arg, "observed": value, "allowed": allowed},
            )
        return by_norm[normalise(value)]

    return check


def _complete(self: BaseModel, info: ValidationInfo) -> BaseModel:
    """An optional argument left out may still be needed (`take X` when only `take X from Y` exists)."""
    context = context_of(info)
    tool: Tool = context["tool"]
    args = self.model_dump(by_alias=True)
    if tool.command(args) not in context["admissible"]:
        for arg in tool.args[1:]:
            needed = tool.choices(arg, args, context["admissible"]) if args.get(arg) is None else []
            if needed:
                raise PydanticCustomError(
                    "missing", "argument needed here", {"field": arg, "observed": None, "allowed": needed}
                )
        raise PydanticCustomError(
            "invalid_action",
            "this command is not possible here",
            {"field": "", "observed": tool.command(args), "allowed": []},
        )
    return self


def _build_model(tool: Tool) -> type[BaseModel]:
    fields: dict[str, Any] = {}
    validators: dict[str, Any] = {}
    for i, arg in enumerate(tool.args):
        py = f"a{i}"
        kinds = " or ".join(_KINDS.get(k, k) for k in tool.kinds.get(arg, []))
        extra: JsonDict | None = {"enum": list(tool.literals)} if tool.literals else None
        desc = f"the {arg}" if tool.literals else f"the name of a {kinds}"
        meta = Field(alias=arg, max_length=MAX_ARG_CHARS, description=desc, json_schema_extra=extra)
        if arg in tool.required:
            fields[py] = (str, meta)
        else:
            fields[py] = (str | None, Field(None, alias=arg, max_length=MAX_ARG_CHARS, description=desc))
        validators[f"check_{py}"] = field_validator(py)(_check(arg, tool.args[0]))
    validators["complete"] = model_validator(mode="after")(_complete)
    return create_model(
        f"{tool.name}_arguments", __config__=ConfigDict(extra="forbid"), __validators__=validators, **fields
    )


def _parse_template(tool: Tool, template: str) -> None:
    rest = template.split()[1:]
    if len(rest) == 1 and not _SLOT.match(rest[0]):
        arg = _LITERAL_ARG.get(tool.name, "what")
        tool.literals.append(rest[0])
        names, parts, form = (
            [arg],
            [re.escape(tool.name), f"(?P<{arg}>{re.escape(rest[0])})"],
            [tool.name, f"{{{arg}}}"],
        )
    else:
        names, parts, form = [], [re.escape(tool.name)], [tool.name]
        for j, word in enumerate(rest):
            slot = _SLOT.match(word)
            if not slot:
                parts.append(re.escape(word))
                form.append(word)
                continue
            # the first slot is the object; a later one is named by the preposition before it
            name = "object" if not names else rest[j - 1]
            names.append(name)
            kinds = tool.kinds.setdefault(name, [])
            if slot.group(1) not in kinds:
                kinds.append(slot.group(1))
            parts.append(f"(?P<{name}>.+)")
            form.append(f"{{{name}}}")
    tool.patterns.append(re.compile("^" + " ".join(parts) + "$"))
    tool.args += [n for n in names if n not in tool.args]
    if " ".join(form) not in tool.forms:
        tool.forms.append(" ".join(form))


def derive_tools(templates: list[str]) -> dict[str, Tool]:
    """One tool per verb of the game's command templates, in the templates' order."""
    tools: dict[str, Tool] = {}
    for template in templates:
        verb = template.split()[0]
        _parse_template(tools.setdefault(verb, Tool(name=verb)), template)
    for tool in tools.values():
        tool.patterns.sort(key=lambda p: -len(p.groupindex))  # match the longest form first
        forms = [set(p.groupindex) for p in tool.patterns]
        tool.required = {a for a in tool.args if all(a in f for f in forms)}
        tool.model = _build_model(tool)
    return tools


def call_for(tools: dict[str, Tool], command: str) -> tuple[str, dict[str, str]] | None:
    """The tool call that plays a game command (e.g. a walkthrough step), or None."""
    tool = tools.get(command.split(" ", 1)[0])
    if tool is None:
        return None
    for pattern in tool.patterns:
        m = pattern.match(command)
        if m:
            return tool.name, {k: v for k, v in m.groupdict().items() if v is not None}
    return None
