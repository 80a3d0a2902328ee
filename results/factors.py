"""Which part of the feedback does the work: each part's (and the form's) paired effect on success.

A record names its condition's canonical composition (`condition_params.composition`, e.g.
`retry+code+location@json`). Two arms differ only in a part when their forms, arbiters and
environment settings are equal and one's parts are the other's plus that part; they differ only
in the form when their parts are equal. For each part, every such pair of arms that ran is used,
over the episodes both played (same suite, task, model, budget, sample seed and decoding arm),
and the pairs are pooled: the effect is the solved rate with the part minus without it. Forms are
compared the same way, level by level (prose -> json, ...). Per model:

- `diff`, its CI and `p_value` by the test a contrast of the same two arms gets
  (`results.contrasts.paired_effect`: one pair per task, a paired bootstrap and exact McNemar;
  several per task, seeds or a fork's points, the task is the unit: a task-cluster bootstrap and a
  sign-flip test, or none with too few tasks), named in `test`; `p_holm`: Holm over the model's rows;
- `pairs` (episode pairs), `arm_pairs` (pairs of conditions pooled) and `tasks`.

Fewer than two pairs give no interval (a bootstrap of one pair is no estimate). A factor that a
composition names but no pair of arms isolates is listed as untestable. A fractional grid is fine:
only what ran is compared. Two spellings of one composition are one arm: their episodes of a key
count once. Records without a composition (written before compositions existed) are left out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from results.columns import C
from results.contrasts import DESIGN, holm, paired_effect, with_mde
from results.power import design_of
from results.resampling import N_BOOT, SEED

COMPOSITION = "condition_params.composition"
ARBITER = "condition_params.arbiter"
ENV = "condition_params.env"
# the columns beyond the report's that the effects read
FACTOR_FIELDS = (COMPOSITION, ARBITER, ENV)
# what pairs two episodes of different arms: the same task, played the same way by the same model
PAIRED = (C.suite, C.task_id, C.budget, C.sample_seed, C.constrain, C.fork)
FORM_ORDER = ("prose", "json", "problem")
COLUMNS = (
    "model",
    "factor",
    "level_a",
    "level_b",
    "diff",
    "ci_low",
    "ci_high",
    "p_value",
    "p_holm",
    "pairs",
    "arm_pairs",
    "test",
)


@dataclass(frozen=True)
class Arm:
    parts: frozenset[str]
    form: str
    rest: str  # the arbiter and the environment settings, which must be equal to compare


@dataclass
class FactorResult:
    table: pd.DataFrame  # one row per model x factor x levels, COLUMNS plus tasks, rate_a, rate_b
    untestable: list[dict[str, str]] = field(default_factory=list)  # {model, factor}


def _arm(composition: str, arbiter: Any, env: Any) -> Arm | None:
    head, sep, form = composition.rpartition("@")
    if not sep or not head:
        return None
    rest = json.dumps([arbiter, env if isinstance(env, dict) else None], sort_keys=True, default=str)
    return Arm(frozenset(head.split("+")), form, rest)


def _episodes(df: pd.DataFrame) -> dict[tuple[str, Arm], pd.DataFrame]:
    """Per model and arm, its valid episodes, one per pairing key (a second spelling's left out)."""
    if COMPOSITION not in df:
        return {}
    rows = df[df[C.success].notna() & df[COMPOSITION].notna()]
    arbiter = rows[ARBITER] if ARBITER in rows else pd.Series(None, index=rows.index)
    env = rows[ENV] if ENV in rows else pd.Series(None, index=rows.index)
    arms = [_arm(str(c), a, e) for c, a, e in zip(rows[COMPOSITION], arbiter, env, strict=True)]
    out: dict[tuple[str, Arm], pd.DataFrame] = {}
    frame = rows[[C.model, *PAIRED, C.success]].assign(_arm=pd.Series(arms, index=rows.index, dtype=object))
    for (model, arm), part in frame.groupby([C.model, "_arm"], sort=False):
        if isinstance(arm, Arm):
            out[(str(model), arm)] = part.drop_duplicates(list(PAIRED), keep="first")
    return out


def _comparisons(arms: list[Arm]) -> dict[tuple[str, str, str], list[tuple[Arm, Arm]]]:
    """(factor, level_a, level_b) -> the pairs of arms that differ in it alone (a without, b with)."""
    found: dict[tuple[str, str, str], list[tuple[Arm, Arm]]] = {}
    for a in arms:
        for b in arms:
            if a.rest != b.rest or a == b:
                continue
            if a.form == b.form and a.parts < b.parts and len(b.parts - a.parts) == 1:
                (part,) = b.parts - a.parts
                found.setdefault((part, "without", "with"), []).append((a, b))
            elif a.parts == b.parts and _form_rank(a.form) < _form_rank(b.form):
                found.setdefault(("form", a.form, b.form), []).append((a, b))
    return found


def _form_rank(form: str) -> tuple[int, str]:
    return (FORM_ORDER.index(form), form) if form in FORM_ORDER else (len(FORM_ORDER), form)


def _row(both: pd.DataFrame, n_boot: int, seed: int) -> dict[str, Any]:
    sa = both["success_a"].astype(bool).to_numpy()
    sb = both["success_b"].astype(bool).to_numpy()
    tasks = both.groupby([C.suite, C.task_id], sort=False).ngroup().to_numpy()
    # the same test a contrast of these arms gets (results.contrasts.paired_effect): with the part
    # minus without it, in the pairs' own unit (a pair, or a task of several pairs: seeds, fork points)
    row, _, _, _ = paired_effect(sb, sa, tasks, n_boot, seed)
    return {
        DESIGN: design_of(sb, sa, tasks),
        "diff": row["diff"],
        "ci_low": row["ci_low"],
        "ci_high": row["ci_high"],
        "p_value": row["p_value"],
        "p_draws": row["p_draws"],
        "p_se": row["p_se"],
        "test": row["test"],
        "pairs": row["n_pairs"],
        "tasks": row["n_tasks"],
        "rate_a": row["rate_b"],
        "rate_b": row["rate_a"],
    }


@dataclass
class FactorPairs:
    """One factor's pooled episode pairs in one model: columns success_a (without the part, or the
    lower form) and success_b, with PAIRED."""

    model: str
    factor: str
    level_a: str
    level_b: str
    arm_pairs: int
    pairs: pd.DataFrame


def factor_pairs(df: pd.DataFrame) -> tuple[list[FactorPairs], list[dict[str, str]]]:
    """Every factor a pair of arms isolates, per model, with its pooled pairs; and the untestable."""
    episodes = _episodes(df)
    found: list[FactorPairs] = []
    untestable: list[dict[str, str]] = []
    for model in sorted({m for m, _ in episodes}):
        arms = [arm for m, arm in episodes if m == model]
        comparisons = _comparisons(arms)
        for (factor, level_a, level_b), arm_pairs in sorted(comparisons.items()):
            pairs = [
                episodes[(model, a)].merge(episodes[(model, b)], on=list(PAIRED), suffixes=("_a", "_b"))
                for a, b in arm_pairs
            ]
            both = pd.concat(pairs, ignore_index=True)
            found.append(FactorPairs(model, factor, level_a, level_b, len(arm_pairs), both))
        named = {p for arm in arms for p in arm.parts} | ({"form"} if len({a.form for a in arms}) > 1 else set())
        tested = {factor for factor, _, _ in comparisons}
        untestable += [{"model": model, "factor": f} for f in sorted(named - tested)]
    return found, untestable


def factor_effects(df: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED) -> FactorResult:
    found, untestable = factor_pairs(df)
    rows: list[dict[str, Any]] = []
    for model in sorted({f.model for f in found}):
        mine = [
            {
                "model": f.model,
                "factor": f.factor,
                "level_a": f.level_a,
                "level_b": f.level_b,
                "arm_pairs": f.arm_pairs,
                **_row(f.pairs, n_boot, seed),
            }
            for f in found
            if f.model == model
        ]
        for row, adjusted in zip(mine, holm([r["p_value"] for r in mine]), strict=True):
            row["p_holm"] = float(adjusted)
        rows += mine
    columns = [*COLUMNS, "tasks", "rate_a", "rate_b"]
    table = pd.DataFrame(rows, columns=[*columns, DESIGN])
    table["mde"] = with_mde(table, [C.model], table[DESIGN]) if len(table) else []
    return FactorResult(table.drop(columns=DESIGN), untestable)
