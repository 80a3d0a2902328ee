"""Turn a pydantic ValidationError from a tool's input contract into one `Violation`.

The Violation's `message` is the validator's short diagnostic with no alternatives in it (built-in
messages such as literal_error list the permitted values, so those are replaced); the allowed
values travel separately in `allowed`, and the real traceback in `raw`.
"""

from __future__ import annotations

from typing import Any, Callable

from pydantic import ValidationError, ValidationInfo
from pydantic_core import PydanticCustomError

from envs.contract import Violation

# built-in error types whose pydantic message spells out the permitted values
_LISTING_TYPES = {"literal_error", "enum"}

AllowedFor = Callable[[str], list[str]]


def _location(err: dict[str, Any]) -> str:
    ctx = err.get("ctx") or {}
    if "field" in ctx:
        return str(ctx["field"])
    loc = [str(p) for p in err["loc"]]
    return ".".join(loc) if loc else "arguments"


def violation_from_error(exc: ValidationError, tool: str, allowed_for: AllowedFor, prefix: str = "arguments") -> Violation:
    errors = exc.errors(include_url=False)
    err = errors[0]
    ctx = err.get("ctx") or {}
    field = _location(err)
    if "observed" in ctx:
        observed = ctx["observed"]
    elif err["loc"]:
        observed = err.get("input")
    else:
        observed = None
    allowed = [str(a) for a in ctx["allowed"]] if "allowed" in ctx else allowed_for(field)
    short = "value is not one of the permitted values" if err["type"] in _LISTING_TYPES else err["msg"]
    more = f" (+{len(errors) - 1} more errors)" if len(errors) > 1 else ""
    return Violation.from_exception(
        exc,
        code=err["type"],
        location=f"{prefix}.{field}" if prefix else field,
        observed=_jsonable(observed),
        allowed=allowed,
        message=f"{tool}: {field}: {short}{more}",
        tool=tool,
    )


def _jsonable(value: Any) -> Any:
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    return str(value)


def context_of(info: ValidationInfo) -> dict[str, Any]:
    """The validation context a tool passes in: reference date, state, `normalize` switch."""
    return info.context or {}


def normalizing(info: ValidationInfo) -> bool:
    """The before phase is on unless the context says the contract is strict."""
    return context_of(info).get("normalize", True)


def fail(kind: str, message: str, field: str, observed: Any, allowed: list[str]) -> PydanticCustomError:
    """A rule failure that `violation_from_error` reads back: location, observed and allowed
    travel in the error's context, and the message names no alternative."""
    return PydanticCustomError(kind, message, {"field": field, "observed": observed, "allowed": allowed})
