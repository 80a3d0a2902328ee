"""What one gate failure says, as the artifact read it: label, location, expected and observed.

The Violation of a rejected attempt is built from these (its location and observed value), and
the veriharness feedback renderers (`conditions.veriharness`) write them into their lines.
Values are cut to `cut` characters, strings as they are and anything else as sorted-key JSON.
"""

from __future__ import annotations

import json
from typing import Any

from envs.textworld.veriharness import stimuli as s
from envs.textworld.veriharness.envelope import LeafOutput
from envs.textworld.veriharness.gates import Failure

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
    return {
        "artifact_missing": s.REQUIRED_ARTIFACT,
        "empty_answer": s.EXPECTED_EMPTY_ANSWER,
        "task_id_mismatch": task_id,
    }.get(f.code, s.EXPECTED_DEFAULT)


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
    return {
        "label": f"{gate}.{f.code}",
        "location": _location(gate, f, cut),
        "expected": _expected(f, task_id, cut),
        "observed": _observed(f, leaf, cut),
    }
