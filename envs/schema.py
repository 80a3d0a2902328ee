"""The JSON schema a model sees for a tool's input model, independent of pydantic's version.

A tool's schema is part of the prompt: it must not change when a dependency is upgraded within
its allowed range. pydantic's own rendering of a field is not fixed across 2.x releases (Decimal
fields, for one, gained a `pattern` in some releases and lost it again), so every model-facing
schema is made here, by a generator that renders such fields one way that is ours.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema


class StableJsonSchema(GenerateJsonSchema):
    """pydantic's generator with our own rendering of the fields whose form varies by release."""

    def decimal_schema(self, schema: core_schema.DecimalSchema) -> JsonSchemaValue:
        """A number (with the field's bounds) or a numeric string; never a `pattern`."""
        string: dict[str, Any] = {"type": "string"}
        if self.mode != "validation":
            return string
        number: dict[str, Any] = {"type": "number"}
        for value, name in (
            (schema.get("gt"), "exclusiveMinimum"),
            (schema.get("ge"), "minimum"),
            (schema.get("lt"), "exclusiveMaximum"),
            (schema.get("le"), "maximum"),
            (schema.get("multiple_of"), "multipleOf"),
        ):
            if value is not None:
                number[name] = float(value)
        return {"anyOf": [number, string]}


def model_schema(model: type[BaseModel], by_alias: bool = True) -> dict[str, Any]:
    """The input schema of a tool, as the model sees it (before a suite's own views trim it)."""
    return model.model_json_schema(by_alias=by_alias, schema_generator=StableJsonSchema)
