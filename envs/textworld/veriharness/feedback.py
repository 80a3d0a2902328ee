"""The artifact's repair lines for the four paper conditions, from the gate results of one attempt.

Every failure of every gate becomes one line (an unparseable answer fails four times: schema
twice, artifact, textworld); lines are de-duplicated in order; the rejected answer is echoed
only when the envelope parsed, from its `answer` field. Values are cut to `cut` characters
(the artifact: 240), strings as they are and anything else as sorted-key JSON, so the list of
alternatives can end mid-item. The condition decides what a line says:

- raw (RawDiag): the generic retry lines, then each gate's raw message; no location, no alternatives
- loc_obs (LocObs): label, location and observed value as keyed JSON
- allowed_prose (SameNL): location, observed and expected value as prose, without the label
- allowed_json (TypedFields): label, location, expected and observed as keyed JSON
"""

from __future__ import annotations

import json
from typing import Any

from envs.textworld.veriharness import stimuli as s
from envs.textworld.veriharness.envelope import LeafOutput
from envs.textworld.veriharness.gates import Failure, GateResult

CONDITIONS = tuple(s.VARIANTS)
_OBSERVED_KEYS = ("observed", "actual", "action", "answer", "stdout", "stderr")


def short(value: Any, cut: int | None) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if cut is None else text[:cut]


def _location(gate: str, f: Failure, cut: int | None) -> str:
    if "location" in f.details:
        return short(f.details["location"], cut)
    if f.code == "artifact_missing":
        return s.LOCATION_ARTIFACTS
    if f.code in {"schema_invalid", "empty_answer", "task_id_mismatch", "client_error"}:
        return s.LOCATION_LEAF
    return f"{gate}.{f.code}"


def _expected(f: Failure, task_id: str, cut: int | None) -> str:
    if "expected" in f.details:
        return short(f.details["expected"], cut)
    return {"artifact_missing": s.REQUIRED_ARTIFACT, "empty_answer": s.EXPECTED_EMPTY_ANSWER,
            "task_id_mismatch": task_id}.get(f.code, s.EXPECTED_DEFAULT)


def _observed(f: Failure, leaf: LeafOutput, cut: int | None) -> str:
    for key in _OBSERVED_KEYS:
        if key in f.details:
            return short(f.details[key], cut)
    if f.code == "artifact_missing":
        return short(leaf.artifacts, cut)
    if f.code == "task_id_mismatch":
        return leaf.task_id  # the artifact quoted the id uncut
    return short(leaf.answer, cut)


def fields(gate: str, f: Failure, leaf: LeafOutput, task_id: str, cut: int | None) -> dict[str, str]:
    return {"label": f"{gate}.{f.code}", "location": _location(gate, f, cut),
            "expected": _expected(f, task_id, cut), "observed": _observed(f, leaf, cut)}


def _line(condition: str, gate: str, f: Failure, leaf: LeafOutput, task_id: str, cut: int | None) -> str:
    if condition == "raw":
        return s.RAW_ITEM.format(gate=gate, message=f.message)
    r = fields(gate, f, leaf, task_id, cut)
    if condition == "allowed_prose":
        return s.NATURAL_ITEM.format(location=r["location"], observed=r["observed"], expected=r["expected"])
    keys = ("label", "location", "observed") if condition == "loc_obs" else ("label", "location", "expected", "observed")
    return s.TYPED_ITEM_PREFIX + json.dumps({k: r[k] for k in keys}, sort_keys=True)


def retry_items(condition: str, leaf: LeafOutput, results: list[GateResult], task_id: str, cut: int | None,
                echo_chars: int | None) -> list[str]:
    """The feedback list the next prompt shows (twice). Empty when no gate failed."""
    if condition not in s.VARIANTS:
        raise ValueError(f"the veriharness protocol has no feedback for condition {condition!r}; "
                         f"allowed: {', '.join(CONDITIONS)}")
    failures = [(r.gate, f) for r in results for f in r.failures]
    if not failures:
        return []
    header = {"raw": list(s.RAW_HEADER), "allowed_prose": [s.NATURAL_HEADER]}.get(condition, [s.TYPED_HEADER])
    lines = header + [_line(condition, gate, f, leaf, task_id, cut) for gate, f in failures]
    if leaf.answer:
        echoed = leaf.answer if echo_chars is None else leaf.answer[:echo_chars]
        lines.append((s.NATURAL_ECHO if condition == "allowed_prose" else s.ECHO).format(answer=echoed))
    return list(dict.fromkeys(line for line in lines if line))
