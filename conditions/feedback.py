"""Feedback renderers: what the agent is told about a rejected call.

Every renderer gets the same `Violation` and differs only in what it shows. `allowed_prose` and
`allowed_json` carry the same four fields (label, location, observed, allowed); `loc_obs`, `raw`
and `none` never show an allowed value; `traceback` leaks what an unguarded tool would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from envs.contract import Violation

RETRY = "Your previous call failed. Try again."
# the floor: all that `none` (and the self-check arms, after a rejection) tell the agent
INVALID = "The call was invalid. Try again."


def _cut(text: str, cut: int | None) -> str:
    return text if cut is None or len(text) <= cut else text[:cut]


def _value(value: Any) -> str:
    """A value as the agent sees it: strings quoted as JSON so prose stays parseable."""
    return json.dumps(value, ensure_ascii=False, default=str)


def render_none(v: Violation, cut: int | None) -> str:
    return INVALID


def render_raw(v: Violation, cut: int | None) -> str:
    return f"{RETRY}\nValidator: {_cut(v.message, cut)}"


def render_traceback(v: Violation, cut: int | None) -> str:
    return f"{RETRY}\n{_cut(v.raw or v.message, cut)}"


def _fields(v: Violation, cut: int | None, with_allowed: bool) -> dict[str, Any]:
    """The keyed fields. With a cut (the paper's 240 chars), every value becomes a cut string,
    so a long list of alternatives can end mid-list, as it did in the paper."""
    fields: dict[str, Any] = {"error": v.code, "location": v.location, "observed": v.observed}
    if with_allowed:
        fields["allowed"] = list(v.allowed)
    if cut is None:
        return fields
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "allowed":
            text = ", ".join(value)
        else:
            text = value if isinstance(value, str) else _value(value)
        out[key] = _cut(text, cut)
    return out


def render_loc_obs(v: Violation, cut: int | None) -> str:
    return f"{RETRY}\n{json.dumps(_fields(v, cut, with_allowed=False), ensure_ascii=False, default=str)}"


def render_allowed_json(v: Violation, cut: int | None) -> str:
    return f"{RETRY}\n{json.dumps(_fields(v, cut, with_allowed=True), ensure_ascii=False, default=str)}"


def render_allowed_prose(v: Violation, cut: int | None) -> str:
    f = _fields(v, cut, with_allowed=True)
    where = f"at {_value(f['location'])}" if f["location"] is not None else "with no single location"
    if isinstance(f["allowed"], str):  # cut: one string, possibly ending mid-list
        allowed = f"The allowed values are: {f['allowed']}"
    elif f["allowed"]:
        allowed = "The allowed values are: " + ", ".join(_value(a) for a in f["allowed"]) + "."
    else:
        allowed = "There is no list of allowed values for this error."
    return (
        f"{RETRY}\nThe error was {_value(f['error'])} {where}: "
        f"you sent {_value(f['observed'])}, which is not accepted. {allowed}"
    )


Renderer = Callable[[Violation, int | None], str]

RENDERERS: dict[str, Renderer] = {
    "none": render_none,
    "raw": render_raw,
    "traceback": render_traceback,
    "loc_obs": render_loc_obs,
    "allowed_prose": render_allowed_prose,
    "allowed_json": render_allowed_json,
}
