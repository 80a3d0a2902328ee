"""The repairs table of a fork (results.forks, results.fork_sources) as display strings, and the
notes under it: who played the source's own rows, and where player and feedback are confounded."""

from __future__ import annotations

from typing import Any

import pandas as pd

from results.columns import C
from results.formats import TEST_NAMES, _diff, _num, _p, _pct, null_result
from results.report_model import Report


def _rate_ci(row: Any, rate: float | None, low: float | None, high: float | None) -> str:
    """A fork rate with its interval, or why it has none (too few tasks for a clustered one; the
    source's own row, a record of what happened, stands beside the forks with none)."""
    if row.player is not None:
        return _pct(rate)
    if row.too_few_tasks:
        return f"{_pct(rate)} [{row.tasks} tasks: too few]"
    return f"{_pct(rate)} [{_pct(low)}, {_pct(high)}]"


def forks_frame(report: Report) -> pd.DataFrame:
    """A fork's repairs per condition (results.forks); none for runs played from their start."""
    return pd.DataFrame(
        [
            {
                C.model: r.model,
                "condition": r.condition,
                **r.group([C.suite]),
                "points": r.fork_points,
                "repaired next [95% CI]": _rate_ci(r, r.repaired_next, r.repaired_next_ci_low, r.repaired_next_ci_high),
                "progressed": _pct(r.progressed),
                "solved [95% CI]": _rate_ci(r, r.solved, r.solved_ci_low, r.solved_ci_high),
                **(
                    {"turn solved [95% CI]": _rate_ci(r, r.part_solved, r.part_solved_ci_low, r.part_solved_ci_high)}
                    if any(f.part_solved is not None for f in report.forks)
                    else {}
                ),
                "calls to repair": _num(r.calls_to_repair, 2),
                "tok/repair": _num(r.tokens_per_repair, 0),
                "vs source's own [95% CI]": _vs_source(r),
                "calls/point": _num(r.calls_per_point, 1),
                "calls paid": "—" if r.calls_paid is None else r.calls_paid,
                "replayed": "—" if r.calls_replayed is None else r.calls_replayed,
            }
            for r in report.forks
        ]
    )


def _vs_source(row: Any) -> str:
    """Repaired-next minus the source's own next move, where the player is the same (else why not)."""
    if row.player is not None:
        return f"played by {row.player}" + (": player and feedback confounded" if row.confounded else "")
    if row.vs_source is None:
        return "—"
    diff = _diff(row.vs_source, row.vs_source_ci_low, row.vs_source_ci_high, row.vs_source_points or 0, 100, 1)
    return f"{diff}, p {_p(row.vs_source_p)} ({TEST_NAMES.get(row.vs_source_test or '', row.vs_source_test)})"


def forks_notes(report: Report) -> list[str]:
    """Under the repairs table: who played each source's-own row, and where that player is not the
    forks' (the difference is then one of players and feedback at once), a line saying so."""
    notes = []
    for r in report.forks:
        if r.player is None:
            continue
        where = f"{r.model} {r.condition}"
        if r.confounded:
            notes.append(
                f"{where}: the source's player {r.player} under its own feedback, at the same {r.fork_points} "
                f"points; another player than {r.model}: player and feedback are confounded, no contrast"
            )
        else:
            notes.append(f"{where}: {r.player}'s own next move at the same {r.fork_points} points (vs source's own)")
    for r in report.forks:
        name, size = f"{r.model} {r.condition} vs source's own", f"{r.vs_source_points} points"
        line = null_result(name, r.vs_source_p, r.vs_source_mde, report.meta.alpha, size)
        notes += [line] if line else []
    return notes
