"""Typed tools and how a rejected call becomes a `Violation`, for every environment.

A typed tool has a name and a pydantic input model. `TypedTool.validate` runs the model with the
environment's validation context; a `ValidationError` is translated here, and only here, into one
Violation. Its `message` is the validator's short diagnostic with no alternatives in it (built-in
messages such as literal_error list the permitted values, so those are replaced); the allowed
values travel separately in `allowed`, and the real traceback in `raw`.

The before phase (normalising human notation) is declared on the fields: `normalised(fn)` and
`normalised_on_day(fn)` are the `Annotated` metadata that run `fn` unless the context's `normalize`
switch is off (the strict contract).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Any, ClassVar

from pydantic import BaseModel, BeforeValidator, ValidationError, ValidationInfo
from pydantic_core import ErrorDetails, PydanticCustomError

from envs.contract import Bounds, Violation
from envs.errors import SuiteBug

# pydantic's constraint errors: what the field allows is a bound (Violation.bounds), not a list
BOUND_ERRORS = frozenset(
    {
        "greater_than",
        "greater_than_equal",
        "less_than",
        "less_than_equal",
        "multiple_of",
        "string_too_short",
        "string_too_long",
        "too_short",
        "too_long",
        "string_pattern_mismatch",
    }
)
_BOUND_PARTS = ("ge", "gt", "le", "lt", "multiple_of", "min_length", "max_length", "pattern")

# built-in error types whose pydantic message spells out the permitted values
LISTING_WORDING = {
    "literal_error": "value is not one of the permitted values",
    "enum": "value is not one of the permitted values",
}


class TypedTool:
    """What every typed tool shares: a name, an input model, and one path from a rejected call to
    a Violation. How a family's Violations read is data, below, because the feedback a model sees
    depends on it: the tool tasks keep these defaults, the game's step protocol sets its own."""

    name: str
    model: type[BaseModel] | None
    # error type -> the short diagnostic that replaces pydantic's message
    wording: ClassVar[dict[str, str]] = LISTING_WORDING
    # the message ends in "(+N more errors)" when the call broke several rules
    count_more: ClassVar[bool] = True
    # a missing argument quotes the whole call as observed (tool tasks) or nothing (game commands)
    quote_call_when_missing: ClassVar[bool] = True
    # observed strings longer than this are cut (None: quoted whole)
    observed_chars: ClassVar[int | None] = None

    def allowed(self, field: str, arguments: dict[str, Any], context: dict[str, Any]) -> list[str]:
        """What the contract accepts at a field, for errors that do not carry their own list."""
        return []

    def argument_names(self) -> list[str]:
        assert self.model is not None
        return [f.alias or name for name, f in self.model.model_fields.items()]

    def allowed_at(self, field: str, arguments: dict[str, Any], context: dict[str, Any]) -> list[str]:
        names = self.argument_names()
        if field not in names:
            return names  # an unknown argument: the ones that exist
        return self.allowed(field, arguments, context)

    def validate(self, arguments: dict[str, Any], context: dict[str, Any]) -> BaseModel | Violation:
        assert self.model is not None
        try:
            return self.model.model_validate(arguments, context=context)
        except ValidationError as exc:
            return violation_from_error(exc, self, arguments, context)


def _location(err: ErrorDetails) -> str:
    ctx = err.get("ctx") or {}
    if "field" in ctx:
        return str(ctx["field"])
    return ".".join(str(p) for p in err["loc"])


def violation_from_error(
    exc: ValidationError, tool: TypedTool, arguments: dict[str, Any], context: dict[str, Any]
) -> Violation:
    errors = exc.errors(include_url=False)
    err = errors[0]
    ctx = err.get("ctx") or {}
    raised = ctx.get("error")
    if err["type"] in ("value_error", "assertion_error") and isinstance(raised, BaseException):
        # the validator's own code raised: a rule says no through `fail`, a bug through anything else
        raise SuiteBug(f"{tool.name}'s input validator", raised) from exc
    field = _location(err)
    if "observed" in ctx:
        observed = ctx["observed"]
    elif not err["loc"] or (err["type"] == "missing" and not tool.quote_call_when_missing):
        observed = None
    else:
        observed = err.get("input")
    allowed = ctx["allowed"] if "allowed" in ctx else tool.allowed_at(field, arguments, context)
    bounds = bounds_of(tool.model, field, ctx) if err["type"] in BOUND_ERRORS else None
    short = tool.wording.get(err["type"], err["msg"])
    more = f" (+{len(errors) - 1} more errors)" if len(errors) > 1 and tool.count_more else ""
    return Violation.from_exception(
        exc,
        code=err["type"],
        location=f"arguments.{field}" if field else "arguments",
        observed=_quoted(_jsonable(observed), tool.observed_chars),
        allowed=[str(a) for a in allowed],
        message=f"{tool.name}: {field or 'arguments'}: {short}{more}",
        tool=tool.name,
        bounds=bounds,
    )


def bounds_of(model: type[BaseModel] | None, field: str, ctx: dict[str, Any]) -> Bounds | None:
    """Every constraint the field states (`Field(ge=10, le=2048)`: both bounds, though the error
    names one), with what the error's own context adds."""
    found: dict[str, Any] = {}
    info = model.model_fields.get(field) if model is not None else None
    for meta in info.metadata if info is not None else []:
        for part in _BOUND_PARTS:
            value = getattr(meta, part, None)
            if value is not None:
                found[part] = value
    for part in _BOUND_PARTS:
        if ctx.get(part) is not None:
            found.setdefault(part, ctx[part])
    numeric = {k: v for k, v in found.items() if k == "pattern" or isinstance(v, (int, float))}
    return Bounds(**numeric) if numeric else None


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def _quoted(value: Any, chars: int | None) -> Any:
    if chars is not None and isinstance(value, str) and len(value) > chars:
        return value[:chars] + "…"
    return value


def context_of(info: ValidationInfo) -> dict[str, Any]:
    """The validation context a tool passes in: reference date, state, `normalize` switch."""
    return info.context or {}


def normalizing(info: ValidationInfo) -> bool:
    """The before phase is on unless the context says the contract is strict."""
    return bool(context_of(info).get("normalize", True))


def normalised(fn: Callable[[Any], Any]) -> BeforeValidator:
    """The before phase of a field: `fn` repairs human notation unless the contract is strict."""

    def before(value: Any, info: ValidationInfo) -> Any:
        return fn(value) if normalizing(info) else value

    return BeforeValidator(before)


def normalised_on_day(fn: Callable[[Any, date], Any]) -> BeforeValidator:
    """A before phase that reads the task's reference date (`today` in the context, never the
    clock); without one the value passes unchanged."""

    def before(value: Any, info: ValidationInfo) -> Any:
        today = context_of(info).get("today")
        return fn(value, today) if normalizing(info) and today is not None else value

    return BeforeValidator(before)


def fail(kind: str, message: str, field: str, observed: Any, allowed: list[str]) -> PydanticCustomError:
    """A rule failure that `violation_from_error` reads back: location, observed and allowed
    travel in the error's context, and the message names no alternative."""
    return PydanticCustomError(kind, message, {"field": field, "observed": observed, "allowed": allowed})


__all__ = ["TypedTool", "context_of", "fail", "normalised", "normalised_on_day", "normalizing", "violation_from_error"]
