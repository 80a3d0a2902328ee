"""A fork's repairs (harness.fork): per condition, how often a recorded failure was repaired.

Every fork episode starts at a recorded failure, so its rates are conditional on that failure
having happened: they estimate repair given a failure, never end-to-end success. Per model,
suite and condition: the fork points, the share whose first call after the feedback was accepted
(repaired next), the share that went on to solve the task and, in a task of parts (BFCL's turns),
the share that solved the part the failure was in, each with a 95% CI from a bootstrap
that resamples whole tasks (a task's fork points are not independent); the calls a repair took;
the tokens per repair; and the calls replayed from the source, which a full grid would have paid
again under every condition.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from results.columns import C
from results.fork_sources import against_source, source_rows
from results.resampling import MIN_CLUSTERS, N_BOOT, SEED, cluster_bootstrap, percentile_ci
from results.stats import condition_rank, valid_rows

GROUP = (C.model, C.suite, C.condition)


def is_fork(df: pd.DataFrame) -> pd.Series:
    return df[C.fork].astype(str) != "" if C.fork in df else pd.Series(False, index=df.index)


def too_few_tasks(tasks: np.ndarray) -> bool:
    """Fewer tasks than an interval needs (the contrasts' and factors' own rule,
    results.resampling.MIN_CLUSTERS, whether a task holds one fork point or several): no interval."""
    return len(np.unique(tasks)) < MIN_CLUSTERS


def _rate_ci(values: np.ndarray, tasks: np.ndarray, n_boot: int, seed: int) -> tuple[float, float, float]:
    if not len(values):
        return math.nan, math.nan, math.nan
    enough = len(np.unique(tasks)) > 1 and not too_few_tasks(tasks)
    boot = cluster_bootstrap(values, tasks, n_boot, seed) if enough else np.array([])
    low, high = percentile_ci(boot)
    return float(values.mean()), low, high


def fork_rows(df: pd.DataFrame, n_boot: int = N_BOOT, seed: int = SEED) -> list[dict[str, Any]]:
    """One row per (model, suite, condition) of the fork records in `df`; none without forks."""
    forks = valid_rows(df[is_fork(df)])
    if forks.empty:
        return []
    rows = []
    for (model, suite, condition), part in forks.groupby(list(GROUP), sort=False):
        tasks = part.groupby([C.suite, C.task_id], sort=False).ngroup().to_numpy()
        repaired = part[C.repaired_next].fillna(False).astype(bool).to_numpy(dtype=float)
        solved = part[C.success].astype(bool).to_numpy(dtype=float)
        rate, low, high = _rate_ci(repaired, tasks, n_boot, seed)
        won, won_low, won_high = _rate_ci(solved, tasks, n_boot, seed)
        steps = pd.to_numeric(part[C.calls_to_repair], errors="coerce").dropna()
        tokens = pd.to_numeric(part[C.prompt_tokens], errors="coerce") + pd.to_numeric(
            part[C.completion_tokens], errors="coerce"
        )
        ever = int(steps.size)
        part_solved = _part_solved(part, tasks, n_boot, seed)
        rows.append(
            {
                C.model: model,
                C.suite: suite,
                C.condition: condition,
                "fork_points": int(part[C.fork].nunique()),
                "tasks": int(len(np.unique(tasks))),
                "repaired_next": rate,
                "repaired_next_ci_low": low,
                "repaired_next_ci_high": high,
                "solved": won,
                "solved_ci_low": won_low,
                "solved_ci_high": won_high,
                **part_solved,
                "calls_to_repair": float(steps.mean()) if ever else None,
                "tokens_per_repair": float(tokens.sum()) / ever if ever and not tokens.isna().any() else None,
                **against_source(part, n_boot, seed),
                "calls_paid": int(part[C.model_calls].sum()),
                "calls_per_point": float(part[C.model_calls].mean()),
                "progressed": _share(part, C.progressed),
                "too_few_tasks": too_few_tasks(tasks),
                "calls_replayed": int(pd.to_numeric(part[C.prefix_calls], errors="coerce").fillna(0).sum()),
            }
        )
    rows.sort(key=lambda r: (str(r[C.model]), str(r[C.suite]), condition_rank(str(r[C.condition]))))
    # each (model, suite)'s forks, then the source's own next move at the same points
    own = source_rows(forks, n_boot, seed)
    return sorted([*rows, *own], key=lambda r: (str(r[C.model]), str(r[C.suite]), "player" in r))


def _share(part: pd.DataFrame, column: str) -> float | None:
    """The share of the rows where `column` is true, of those where it is known (None: none)."""
    if column not in part:
        return None
    known = part[column].dropna()
    return float(known.astype(bool).mean()) if len(known) else None


def _part_solved(part: pd.DataFrame, tasks: np.ndarray, n_boot: int, seed: int) -> dict[str, Any]:
    """In tasks of parts (BFCL's turns): the share of forks that solved the part their failure
    was in, by the suite's own checker; None where the suite has no parts."""
    if C.segment_solved not in part:
        return {"part_solved": None, "part_solved_ci_low": None, "part_solved_ci_high": None}
    judged = part[C.segment_solved].notna().to_numpy()
    if not judged.any():
        return {"part_solved": None, "part_solved_ci_low": None, "part_solved_ci_high": None}
    values = part[C.segment_solved][judged].astype(bool).to_numpy(dtype=float)
    rate, low, high = _rate_ci(values, tasks[judged], n_boot, seed)
    return {"part_solved": rate, "part_solved_ci_low": low, "part_solved_ci_high": high}
