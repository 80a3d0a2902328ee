"""What a pilot says of the study to run: per contrast and factor, in the unit the report tests it in,
the minimum detectable effect at the pilot's size and the size an effect needs (`results.power`).

The family is the report's: the contrasts asked (or the paper's planned ones present) within each
model, and each model's factors (`results.factors`); a family of k tests is planned at alpha / k.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from results import power
from results.columns import C
from results.contrasts import pair
from results.factors import factor_pairs
from results.power_sim import simulate
from results.stats import ALPHA

COLUMNS = [
    C.model,
    "kind",
    "comparison",
    "family",
    "unit",
    "tasks",
    "pairs",
    "pilot_diff",
    "discordance",
    "a_only",
    "b_only",
    "icc",
    "mde",
    "effect",
    "needed",
    "needed_pairs",
    "per_task_needed",
    "power_at_needed",
    "simulated",
]


@dataclass(frozen=True)
class Goal:
    effect: float  # the difference to detect, a share (0.05 = 5 points)
    alpha: float = ALPHA
    power: float = power.POWER
    studies: int = 0  # studies drawn to check the power at the size found (0: none)
    seed: int = 0
    # told (what, units, done, studies) after each simulated study: the command's progress and estimate
    progress: Callable[[str, int, int, int], None] | None = field(default=None, compare=False)


def _unit(pairs: pd.DataFrame, design: power.Design) -> str:
    forked = C.fork in pairs and bool((pairs[C.fork].astype(str) != "").any())
    points = forked and pairs.groupby([C.suite, C.task_id])[C.fork].nunique().max() > 1
    if not design.clustered:
        return "fork points (one per task)" if forked else "pairs (one per task)"
    return f"tasks x {design.per_task:.1f} {'fork points' if points else 'seeds'}"


def _row(pairs: pd.DataFrame, goal: Goal, family: int, what: str) -> dict[str, object]:
    sa = pairs["success_a"].astype(bool).to_numpy()
    sb = pairs["success_b"].astype(bool).to_numpy()
    clusters = pairs.groupby([C.suite, C.task_id], sort=False).ngroup().to_numpy()
    design = power.design_of(sa, sb, clusters)
    alpha = goal.alpha / family
    needed = power.size_for(design, goal.effect, alpha, goal.power)
    at_needed = math.nan if needed is None else power.power_at(design, needed, goal.effect, alpha)
    simulated = math.nan
    if goal.studies and needed is not None:
        tell = goal.progress
        tick = None if tell is None else lambda done, studies: tell(what, needed, done, studies)
        simulated = simulate(design, needed, goal.effect, alpha, goal.studies, goal.seed, tick=tick)
    return {
        "unit": _unit(pairs, design),
        "tasks": design.n_tasks,
        "pairs": design.n_pairs,
        "pilot_diff": design.effect,
        "discordance": design.psi,
        # both off-diagonal rates: a solved where b failed, and the other way
        "a_only": (design.psi + design.effect) / 2,
        "b_only": (design.psi - design.effect) / 2,
        "icc": design.icc if design.clustered else math.nan,
        "mde": power.mde(design, design.units, alpha, goal.power),
        "effect": goal.effect,
        "needed": needed,
        "needed_pairs": None if needed is None else math.ceil(needed * (design.per_task if design.clustered else 1)),
        "per_task_needed": power.per_task_for(design, goal.effect, alpha, goal.power),
        "power_at_needed": at_needed,
        "simulated": simulated,
    }


def plan(df: pd.DataFrame, contrasts: Sequence[tuple[str, str]], goal: Goal, factors: bool = False) -> pd.DataFrame:
    """One row per model and comparison (COLUMNS): the pilot's unit and size, the MDE there, and the
    size `goal.effect` needs at `goal.power` (units; pairs; pairs per task with the pilot's tasks)."""
    rows: list[dict[str, object]] = []
    for model in sorted(df[C.model].unique()):
        mine = df[df[C.model] == model]
        paired = [(f"{a}-{b}", pair(mine, a, b)[0]) for a, b in contrasts]
        paired = [(name, p) for name, p in paired if len(p)]
        for name, p in paired:
            rows.append({C.model: model, "kind": "contrast", "comparison": name, "family": len(paired)})
            rows[-1].update(_row(p, goal, len(paired), f"{model} {name}"))
        if factors:
            found = [f for f in factor_pairs(mine)[0] if len(f.pairs)]
            for f in found:
                name = f"{f.factor}: {f.level_b} - {f.level_a}"
                rows.append({C.model: model, "kind": "factor", "comparison": name, "family": len(found)})
                # the factor's effect is with the part minus without it, as the report gives it
                flipped = f.pairs.rename(columns={"success_a": "success_b", "success_b": "success_a"})
                rows[-1].update(_row(flipped, goal, len(found), f"{model} {name}"))
    return pd.DataFrame(rows, columns=COLUMNS)
