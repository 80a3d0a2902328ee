"""Beside a fork's repairs, what the source's own player did next at the same fork points.

Every fork record keeps, in `fork_of`, what its source's player did after the failure, under the
source's own feedback: whether its next answer repaired the failed call (`next_repaired`), each
part's solved (`segments_solved`, read at the fork's `fork_segment`) and whether it solved the
episode (`success`). Per fork model and suite, one row of those rates over the distinct fork points,
labelled as the source's own, with the source's player and condition. Where the fork's player is
the source's (the same model forking its own failures under other feedback), each condition gets
a paired contrast against it on the same points (results.contrasts.paired_effect: the task is the
unit); where it is not, player and feedback are confounded and the report says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from results.columns import C
from results.contrasts import paired_effect
from results.power import POWER, design_of, mde
from results.stats import ALPHA


def _origin(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _share(values: list[Any]) -> float | None:
    known = [bool(v) for v in values if v is not None]
    return sum(known) / len(known) if known else None


def _part_solved(origin: dict[str, Any], segment: Any) -> bool | None:
    solved = origin.get("segments_solved")
    if not isinstance(solved, list) or segment is None or pd.isna(segment) or int(segment) >= len(solved):
        return None
    return bool(solved[int(segment)])


def source_rows(forks: pd.DataFrame, n_boot: int, seed: int) -> list[dict[str, Any]]:
    """One row per (fork model, suite, source player and condition) of what the source did next,
    and per fork condition of the same player a paired contrast of repaired-next against it."""
    if forks.empty or C.fork_of not in forks:
        return []
    rows = []
    for (model, suite), part in forks.groupby([C.model, C.suite], sort=False):
        points = part.drop_duplicates(subset=[C.fork])
        origins = [_origin(o) for o in points[C.fork_of]]
        keys = {(o.get(C.model), o.get(C.condition)) for o in origins}
        for player, condition in sorted(keys, key=str):
            mine = [
                (o, s)
                for o, s in zip(origins, points[C.fork_segment], strict=True)
                if (o.get(C.model), o.get(C.condition)) == (player, condition)
            ]
            rows.append(
                {
                    C.model: model,
                    C.suite: suite,
                    # the player is a column of its own beside it (results.fork_frames)
                    "condition": f"source's own ({condition})",
                    "player": player,
                    "confounded": player != model,
                    "fork_points": len(mine),
                    "repaired_next": _share([o.get("next_repaired") for o, _ in mine]),
                    "part_solved": _share([_part_solved(o, s) for o, s in mine]),
                    "solved": _share([o.get(C.success) for o, _ in mine]),
                }
            )
    return rows


def against_source(part: pd.DataFrame, n_boot: int, seed: int) -> dict[str, Any]:
    """A fork condition's repaired-next minus the source's own next move, over the points whose
    source player is the fork's (the same model forking its own failures: a difference of
    feedback); none where no point is (a difference of players, not of feedback)."""
    if C.fork_of not in part:
        return {}
    origins = [_origin(o) for o in part[C.fork_of]]
    mine = np.array(
        [
            o.get(C.model) == m and o.get("next_repaired") is not None
            for o, m in zip(origins, part[C.model], strict=True)
        ]
    )
    if not mine.any():
        return {}
    own = part[mine]
    fork = own[C.repaired_next].fillna(False).astype(bool).to_numpy()
    source = np.array([bool(o["next_repaired"]) for o, keep in zip(origins, mine, strict=True) if keep])
    tasks = own.groupby([C.suite, C.task_id], sort=False).ngroup().to_numpy()
    row, _, _, _ = paired_effect(fork, source, tasks, n_boot, seed)
    design = design_of(fork, source, tasks)
    return {
        # the smallest difference this test detects at 80% power: what a null here could have seen
        "vs_source_mde": mde(design, design.units, ALPHA, POWER),
        "vs_source": row["diff"],
        "vs_source_ci_low": row["ci_low"],
        "vs_source_ci_high": row["ci_high"],
        "vs_source_p": None if row["p_value"] is None or math.isnan(float(str(row["p_value"]))) else row["p_value"],
        "vs_source_test": row["test"],
        "vs_source_points": int(mine.sum()),
    }
