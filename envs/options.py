"""A suite's options (its pydantic `options_model`, the `--env KEY=VALUE` of `run`) described and
validated for people: one row per option to list, one line per bad value.

`repair-harness suites NAME` lists them, `repair-harness games` validates its flags with them.
"""

from __future__ import annotations

import types
import typing
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from envs.errors import UserError

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

M = typing.TypeVar("M", bound="BaseModel")


def option_rows(model: type[BaseModel]) -> list[tuple[str, str, str, str]]:
    """(key, type, default, allowed) of each option of a suite's pydantic options model."""
    rows = []
    for attr, field in model.model_fields.items():
        kind, allowed = _kind(field.annotation)
        bounds = _bounds(field)
        rows.append((field.alias or attr, kind, _default(field), ", ".join(x for x in (allowed, bounds) if x)))
    return rows


def validate(model: type[M], values: dict[str, Any]) -> M:
    """The options model from `values`; a UserError with one `key: message` per bad value."""
    try:
        return model.model_validate(values)
    except ValidationError as exc:
        raise UserError(
            "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'options'}: {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors(include_url=False)
            )
        ) from None


def _kind(annotation: Any) -> tuple[str, str]:
    """A readable type and, for a Literal, its allowed values."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return "choice", " | ".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        parts = [_kind(a) for a in args if a is not type(None)]
        kind = " or ".join(k for k, _ in parts) + (" or null" if type(None) in args else "")
        return kind, " | ".join(a for _, a in parts if a)
    if origin is not None:  # list[int] and the like
        return f"{getattr(origin, '__name__', origin)}[{', '.join(_kind(a)[0] for a in args)}]", ""
    return getattr(annotation, "__name__", str(annotation)), ""


def _bounds(field: FieldInfo) -> str:
    """ "1..100000" for a closed range, ">= 0" for a half-open one."""
    found = {
        key: getattr(m, key)
        for m in field.metadata
        for key in ("ge", "gt", "le", "lt")
        if getattr(m, key, None) is not None
    }
    if "ge" in found and "le" in found:
        return f"{found['ge']}..{found['le']}"
    marks = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    return ", ".join(f"{marks[k]} {v}" for k, v in found.items())


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "(required)"
    value = field.get_default(call_default_factory=True)
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
