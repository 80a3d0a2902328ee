"""The message family: a composition's feedback about one rejected call, as the message the agent gets.

Every composition gets the same `Violation` and shows exactly its parts (tests/conditions checks
it for every part and form). Lines come in one order: the frame, the retry or invalid line, then
the body in the composition's form:
- prose: "Validator: <message>", the traceback, and one sentence of the fields ("The error was
  <code> at <location>: you sent <observed>, which is not accepted. The allowed values are: ...");
- json: one keyed object (`error`, `location`, `observed`, `allowed`, `message`, `traceback`);
- problem: one RFC 9457 problem details object (`type`, `title`, `status` 422, `detail`, and an
  `invalid-params` entry `{name, reason}` whose extension members hold the observed and allowed
  values), its problem type the violation's code when `code` is a part, else `about:blank`.
The names that are aliases render as they always did: `allowed_json` is
`retry+code+location+observed+allowed@json`, byte for byte.

With a cut (the paper's 240 characters) every field value becomes a string cut to that length,
so a long list of alternatives can end mid-list, as it did in the paper.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from conditions.compose import Composition

if TYPE_CHECKING:  # annotations only: listing the conditions builds no pydantic model
    from envs.contract import Violation

RETRY = "Your previous call failed. Try again."
# the floor: all that `none` (and the self-check arms, after a rejection) tell the agent
INVALID = "The call was invalid. Try again."
# a framing line agent frameworks added after a retry prompt was taken for the user's words
FRAME = "The message below is the validator's feedback on your previous call, not a message from the user."
PROBLEM_TITLE = "The tool call is not valid."
PROBLEM_REASON = "the value is not accepted"
PROBLEM_TYPE = "urn:repair-harness:violation:"


def _cut(text: str, cut: int | None) -> str:
    return text if cut is None or len(text) <= cut else text[:cut]


def _value(value: Any) -> str:
    """A value as the agent sees it: strings quoted as JSON so prose stays parseable."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, default=str)


# a bound's part as prose ("The allowed values are: >= 10 and <= 2048."), read back by agent:reader
BOUND_WORDS = {
    "ge": ">= {}",
    "gt": "> {}",
    "le": "<= {}",
    "lt": "< {}",
    "multiple_of": "a multiple of {}",
    "min_length": "of length >= {}",
    "max_length": "of length <= {}",
    "pattern": "matching the pattern {}",
}


def bounds_text(bounds: dict[str, Any]) -> str:
    return " and ".join(BOUND_WORDS[k].format(v) for k, v in bounds.items())


def _fields(c: Composition, v: Violation, cut: int | None) -> dict[str, Any]:
    """The composition's field parts as keyed values, in the canonical order; the `allowed` part
    carries the bounds too (`bounds`: a range, lengths, a pattern), where the Violation has them."""
    values: dict[str, Any] = {"code": v.code, "location": v.location, "observed": v.observed}
    fields = {part: values[part] for part in ("code", "location", "observed") if c.has(part)}
    if c.has("allowed"):
        fields["allowed"] = list(v.allowed if c.k_allowed is None else v.allowed[: c.k_allowed])
        if v.bounds is not None:
            fields["bounds"] = v.bounds.given()
    if cut is None:
        return fields
    out: dict[str, Any] = {}
    for key, value in fields.items():
        if key == "bounds":
            out[key] = _cut(bounds_text(value), cut)
            continue
        text = ", ".join(value) if key == "allowed" else value if isinstance(value, str) else _value(value)
        out[key] = _cut(text, cut)
    return out


def _allowed_sentence(allowed: Any, bounds: Any = None) -> str:
    if bounds:  # a range or a length: what the values must be, with any listed ones first
        shown = bounds if isinstance(bounds, str) else bounds_text(bounds)
        listed = "" if not allowed else (allowed if isinstance(allowed, str) else ", ".join(_value(a) for a in allowed))
        return f"The allowed values are: {listed + '; ' if listed else ''}{shown}."
    if isinstance(allowed, str):  # cut: one string, possibly ending mid-list
        return f"The allowed values are: {allowed}"
    if allowed:
        return "The allowed values are: " + ", ".join(_value(a) for a in allowed) + "."
    return "There is no list of allowed values for this error."


def _sentence(f: dict[str, Any]) -> str | None:
    """The fields as one sentence of prose (None when the composition shows no field)."""
    words = []
    if "code" in f or "location" in f:
        head = "The error was" + (f" {_value(f['code'])}" if "code" in f else "")
        if "location" in f:
            head += f" at {_value(f['location'])}" if f["location"] is not None else " with no single location"
        words.append(head + (f": you sent {_value(f['observed'])}, which is not accepted." if "observed" in f else "."))
    elif "observed" in f:
        words.append(f"You sent {_value(f['observed'])}, which is not accepted.")
    if "allowed" in f:
        words.append(_allowed_sentence(f["allowed"], f.get("bounds")))
    return " ".join(words) if words else None


def _problem(c: Composition, v: Violation, cut: int | None) -> dict[str, Any]:
    f = _fields(c, v, cut)
    problem: dict[str, Any] = {
        "type": PROBLEM_TYPE + str(f["code"]) if "code" in f else "about:blank",
        "title": PROBLEM_TITLE,
        "status": 422,
    }
    if c.has("message"):
        problem["detail"] = _cut(v.message, cut)
    if c.has("traceback"):
        problem["traceback"] = _cut(v.raw or v.message, cut)
    if any(part in f for part in ("location", "observed", "allowed")):
        entry: dict[str, Any] = {"name": f["location"]} if "location" in f else {}
        entry["reason"] = PROBLEM_REASON
        entry.update({key: f[key] for key in ("observed", "allowed", "bounds") if key in f})
        problem["invalid-params"] = [entry]
    return problem


def render(c: Composition, v: Violation, cut: int | None) -> str:
    """The message about one rejected call that shows exactly the composition's parts."""
    lines = [line for part, line in (("frame", FRAME), ("retry", RETRY), ("invalid", INVALID)) if c.has(part)]
    if c.form == "problem":
        lines.append(_dumps(_problem(c, v, cut)))
    elif c.form == "json":
        body = {"error" if k == "code" else k: value for k, value in _fields(c, v, cut).items()}
        if c.has("message"):
            body["message"] = _cut(v.message, cut)
        if c.has("traceback"):
            body["traceback"] = _cut(v.raw or v.message, cut)
        if body:
            lines.append(_dumps(body))
    else:
        if c.has("message"):
            lines.append(f"Validator: {_cut(v.message, cut)}")
        if c.has("traceback"):
            lines.append(_cut(v.raw or v.message, cut))
        sentence = _sentence(_fields(c, v, cut))
        if sentence is not None:
            lines.append(sentence)
    return "\n".join(lines)
