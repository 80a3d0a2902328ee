"""A typed tool: its input contract, the schema the model sees, and the call into the backend.

The schema is the input model's JSON schema (`envs.schema.model_schema`), in one of two views:
`open` strips every list of allowed values (they live only in the validator, and reach the agent
only through feedback); `enum` keeps the static ones (Literal members) and adds the state-dependent
ones of the task (the customer's cards, existing flight numbers, rooms). The validator is the
same in both views, so a rejected call yields the same Violation whichever the model saw.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, ValidationInfo, model_validator

from envs.contract import ToolSpec
from envs.schema import model_schema
from envs.validation import TypedTool, context_of

SchemaView = Literal["open", "enum"]


class ToolInput(BaseModel):
    """An input contract in the seed's three phases: before (the field types normalise notation),
    core (pydantic types; an unknown argument is an error), after (`rules`: cross-field rules and
    rules against the task's state, read from the validation context)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _after(self, info: ValidationInfo) -> ToolInput:
        self.rules(context_of(info))
        return self

    def rules(self, ctx: dict[str, Any]) -> None:
        """Raise `envs.validation.fail(...)` for the first rule the input breaks."""


def _strip_enums(node: Any) -> Any:
    if isinstance(node, dict):
        return {k: _strip_enums(v) for k, v in node.items() if k not in {"enum", "const"}}
    if isinstance(node, list):
        return [_strip_enums(v) for v in node]
    return node


def _add_enum(prop: dict[str, Any], values: list[str]) -> None:
    """Put the values on the string branch of the property (an Optional field is an anyOf)."""
    for branch in prop.get("anyOf", []):
        if branch.get("type") == "string":
            branch["enum"] = list(values)
            return
    prop["enum"] = list(values)


@functools.cache
def _schema(model: type[BaseModel]) -> dict[str, Any]:
    return model_schema(model)


def schema_view(
    model: type[BaseModel], view: SchemaView, dynamic: dict[str, list[str]] | None = None
) -> dict[str, Any]:
    # a JSON schema is JSON: orjson's round trip copies it in a tenth of deepcopy's time (an episode's
    # largest cost in bank-disputes' set-up)
    schema: dict[str, Any] = orjson.loads(orjson.dumps(_schema(model)))
    schema.pop("title", None)
    if view == "open":
        stripped: dict[str, Any] = _strip_enums(schema)  # a dict's copy is a dict
        return stripped
    for name, values in (dynamic or {}).items():
        _add_enum(schema["properties"][name], values)
    return schema


@dataclass
class Tool(TypedTool):
    """One tool of a domain, bound to one task's backend.

    run: executes a validated input against the backend and returns JSON-able data.
    write: the call changes the backend state (faults fire on writes; inventions are checked).
    slots: argument name -> the customer slots a value there depends on.
    allowed_for: what the contract accepts at a field, for errors that do not carry their own list.
    enums: the state-dependent allowed values that the `enum` view puts in the schema.
    """

    name: str
    description: str
    model: type[BaseModel]
    run: Callable[[Any], Any]
    write: bool = False
    slots: dict[str, tuple[str, ...]] = field(default_factory=dict)
    allowed_for: Callable[[str], list[str]] = lambda _field: []
    enums: Callable[[], dict[str, list[str]]] = dict

    def spec(self, view: SchemaView) -> ToolSpec:
        return ToolSpec(
            name=self.name, description=self.description, parameters=schema_view(self.model, view, self.enums())
        )

    def allowed(self, field: str, arguments: dict[str, Any], context: dict[str, Any]) -> list[str]:
        return self.allowed_for(field)
