"""What a pilot says of the study to run: per contrast and factor, in the unit the report tests it in,
the minimum detectable effect at the pilot's size and the size an effect needs (`results.power`).

One comparison is the report's one test: a contrast per model and suite (and budget, sample seed,
where the pilot mixes them: `results.stats.group_columns`, as `results.contrasts` splits them), a
factor per model pooled over its suites, as `report --factors` pools it (its `suite` names every
suite pooled, and `pooled` says so). The family is the report's Holm family: the contrasts of one
such group that have a test, and each model's factors; a family of k tests is planned at alpha / k.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from results import power
from results.columns import C
from results.contrasts import pair
from results.factors import factor_pairs
from results.load import PAIR_FIELDS
from results.power_sim import simulate
from results.resampling import MIN_CLUSTERS
from results.stats import ALPHA, group_columns

COLUMNS = [
    C.model,
    C.suite,
    "pooled",
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
    # a study planned from the pilot: its power averaged over what the pilot's tasks leave unknown of
    # the between-task variance (results.power._task_sd); the MDE now is the report's, at the estimate
    ahead = dataclasses.replace(design, pilot_df=design.n_tasks - 1) if design.clustered else design
    needed = power.size_for(ahead, goal.effect, alpha, goal.power)
    at_needed = math.nan if needed is None else power.power_at(ahead, needed, goal.effect, alpha)
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
        "per_task_needed": power.per_task_for(ahead, goal.effect, alpha, goal.power),
        "power_at_needed": at_needed,
        "simulated": simulated,
    }


def _tested(pairs: pd.DataFrame) -> bool:
    """Whether the report's test runs on these pairs: where the task is the unit it needs
    MIN_CLUSTERS tasks (results.contrasts.paired_effect); an untested row is no member of the family."""
    tasks = pairs.groupby([C.suite, C.task_id]).ngroup().nunique()
    return tasks >= len(pairs) or tasks >= MIN_CLUSTERS


def groups(df: pd.DataFrame) -> list[str]:
    """The columns a contrast is split by, the report's (model, then suite, budget... where mixed)."""
    return [c for c in group_columns(df) if c in PAIR_FIELDS]


def plan(df: pd.DataFrame, contrasts: Sequence[tuple[str, str]], goal: Goal, factors: bool = False) -> pd.DataFrame:
    """One row per comparison the report tests (COLUMNS): per model and suite (and budget, seed where
    mixed) for a contrast, per model for a factor; the pilot's unit and size, the MDE there, and the
    size `goal.effect` needs at `goal.power` (units; pairs; pairs per task with the pilot's tasks)."""
    rows: list[dict[str, object]] = []
    gcols = groups(df)
    extra = [c for c in gcols if c not in (C.model, C.suite)]
    for model in sorted(df[C.model].unique()):
        mine = df[df[C.model] == model]
        paired = [(f"{a}-{b}", pair(mine, a, b)[0]) for a, b in contrasts]
        parts: dict[tuple[object, ...], list[tuple[str, pd.DataFrame]]] = {}
        for name, p in paired:
            split = [c for c in gcols if c != C.model]
            for keys, part in p.groupby(split, sort=True) if split and len(p) else []:
                parts.setdefault(keys if isinstance(keys, tuple) else (keys,), []).append((name, part))
            if not split and len(p):
                parts.setdefault((), []).append((name, p))
        for keys, found in parts.items():
            group = dict(zip([c for c in gcols if c != C.model], keys, strict=True))
            family = sum(_tested(p) for _, p in found) or 1
            for name, p in found:
                rows.append(
                    {
                        C.model: model,
                        C.suite: str(group.get(C.suite, p[C.suite].iloc[0])),
                        "pooled": False,
                        **{c: group[c] for c in extra},
                        "kind": "contrast",
                        "comparison": name,
                        "family": family,
                    }
                )
                rows[-1].update(_row(p, goal, family, f"{model} {rows[-1][C.suite]} {name}"))
        if factors:
            found_f = [f for f in factor_pairs(mine)[0] if len(f.pairs)]
            for f in found_f:
                name = f"{f.factor}: {f.level_b} - {f.level_a}"
                suites = sorted(str(s) for s in f.pairs[C.suite].unique())
                rows.append(
                    {
                        C.model: model,
                        C.suite: " + ".join(suites),
                        "pooled": len(suites) > 1,
                        "kind": "factor",
                        "comparison": name,
                        "family": len(found_f),
                    }
                )
                # the factor's effect is with the part minus without it, as the report gives it
                flipped = f.pairs.rename(columns={"success_a": "success_b", "success_b": "success_a"})
                rows[-1].update(_row(flipped, goal, len(found_f), f"{model} {name}"))
    return pd.DataFrame(rows, columns=[*COLUMNS[:3], *extra, *COLUMNS[3:]])
