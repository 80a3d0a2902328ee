"""The veriharness protocol's feedback: the artifact's repair lines for the four paper conditions,
from the gate results of one attempt (the Violation's `detail`, a `GateReport`).

A renderer family of its own: the protocol's env writes the whole retry prompt (a RetryWriter)
and shows these lines in it twice; which conditions the protocol can play is which have a
renderer here (`RENDERERS`), checked once, when the spec loads.

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
from collections.abc import Callable

from conditions import ALIASES, Family, Feedback
from envs.contract import Violation
from envs.textworld.veriharness import stimuli as s
from envs.textworld.veriharness.envelope import LeafOutput
from envs.textworld.veriharness.fields import fields
from envs.textworld.veriharness.gates import Failure, GateReport, GateResult


def _line(condition: str, gate: str, f: Failure, leaf: LeafOutput, task_id: str, cut: int | None) -> str:
    if condition == "raw":
        return s.RAW_ITEM.format(gate=gate, message=f.message)
    r = fields(gate, f, leaf, task_id, cut)
    if condition == "allowed_prose":
        return s.NATURAL_ITEM.format(location=r["location"], observed=r["observed"], expected=r["expected"])
    keys = (
        ("label", "location", "observed") if condition == "loc_obs" else ("label", "location", "expected", "observed")
    )
    return s.TYPED_ITEM_PREFIX + json.dumps({k: r[k] for k in keys}, sort_keys=True)


def retry_items(
    condition: str, leaf: LeafOutput, results: list[GateResult], task_id: str, cut: int | None, echo_chars: int | None
) -> list[str]:
    """The feedback list the next prompt shows (twice). Empty when no gate failed."""
    failures = [(r.gate, f) for r in results for f in r.failures]
    if not failures:
        return []
    header = {"raw": list(s.RAW_HEADER), "allowed_prose": [s.NATURAL_HEADER]}.get(condition, [s.TYPED_HEADER])
    lines = header + [_line(condition, gate, f, leaf, task_id, cut) for gate, f in failures]
    if leaf.answer:
        echoed = leaf.answer if echo_chars is None else leaf.answer[:echo_chars]
        lines.append((s.NATURAL_ECHO if condition == "allowed_prose" else s.ECHO).format(answer=echoed))
    return list(dict.fromkeys(line for line in lines if line))


def _renderer(condition: str) -> Callable[[Violation, int | None], list[str]]:
    def render(v: Violation, cut: int | None) -> list[str]:
        report = v.detail
        if not isinstance(report, GateReport):
            raise TypeError(f"a veriharness renderer reads a GateReport, got {type(report).__name__} ({v.code})")
        return retry_items(
            condition, report.leaf, list(report.results), report.task_id, s.value_cut(cut), report.echo_chars
        )

    return render


# condition feedback name -> its renderer; the protocol plays exactly these conditions
RENDERERS: dict[str, Callable[[Violation, int | None], list[str]]] = {c: _renderer(c) for c in s.VARIANTS}


def _find(feedback: Feedback) -> tuple[str, Callable[[Violation, int | None], list[str]]] | None:
    """The artifact's lines play the compositions of the paper's four conditions, under their names."""
    spelled = feedback.spelled()
    name = next((n for n in RENDERERS if ALIASES[n] == spelled), None)
    return None if name is None else (name, RENDERERS[name])


FAMILY = Family(
    "veriharness", _find, ", ".join(f"{n} ({ALIASES[n]})" for n in RENDERERS) + ", the artifact's four conditions"
)
