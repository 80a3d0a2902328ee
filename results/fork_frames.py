"""The repairs table of a fork (results.forks, results.fork_sources) as display strings, and the
notes under it: who played the source's own rows, and where player and feedback are confounded."""

from __future__ import annotations

from typing import Any

import pandas as pd

from results.columns import C
from results.formats import TEST_NAMES, _diff, _num, _p, _pct, merged, null_reason
from results.report_model import Report
from results.resampling import MIN_CLUSTERS


def _rate_ci(row: Any, rate: float | None, low: float | None, high: float | None) -> str:
    """A fork rate with its interval, or why it has none (too few tasks for a clustered one; the
    source's own row, a record of what happened, stands beside the forks with none)."""
    if row.player is not None:
        return _pct(rate)
    if row.too_few_tasks:  # said once under the table (forks_notes)
        return _pct(rate)
    return f"{_pct(rate)} [{_pct(low)}, {_pct(high)}]"


def forks_frame(report: Report) -> pd.DataFrame:
    """A fork's repairs per condition (results.forks); none for runs played from their start. A
    source player whose own rows are alike under every source condition (a floor's 0.0% under each)
    is one row, "source's own (all N)": the JSON keeps a row per condition."""
    return _alike(
        pd.DataFrame(
            [
                {
                    C.model: r.model,
                    "condition": r.condition,
                    # who played each row: the fork's player, or the source's own (a model's name may be long,
                    # but a row without it reads as the fork's player)
                    "player": r.model if r.player is None else r.player,
                    **r.group([C.suite]),
                    "points": r.fork_points,
                    "repaired next [95% CI]": _rate_ci(
                        r, r.repaired_next, r.repaired_next_ci_low, r.repaired_next_ci_high
                    ),
                    "progressed": _pct(r.progressed),
                    "solved [95% CI]": _rate_ci(r, r.solved, r.solved_ci_low, r.solved_ci_high),
                    **(
                        {
                            "turn solved [95% CI]": _rate_ci(
                                r, r.part_solved, r.part_solved_ci_low, r.part_solved_ci_high
                            )
                        }
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
    )


def _alike(frame: pd.DataFrame) -> pd.DataFrame:
    """The source's-own rows of one player, model and suite as one row where all but the condition agree."""
    if frame.empty:
        return frame
    own = frame[C.condition].str.startswith("source's own")
    keys = [c for c in (C.model, C.suite, "player") if c in frame]
    rest = [c for c in frame.columns if c not in (*keys, C.condition)]
    frame = frame.reset_index(drop=True)
    rows = []
    for i in range(len(frame)):
        row = frame.iloc[i]
        if not own.iloc[i]:
            rows.append(row)
            continue
        same = frame[own.to_numpy() & (frame[keys] == row[keys]).all(axis=1).to_numpy()]
        alike = len(same) > 1 and (same[rest].astype(str).nunique() == 1).all()
        if not alike:
            rows.append(row)
        elif i == same.index[0]:
            one = row.copy()
            one[C.condition], one["points"] = f"source's own (all {len(same)})", f"{row['points']} each"
            rows.append(one)
    return pd.DataFrame(rows).reset_index(drop=True)


def _vs_source(row: Any) -> str:
    """Repaired-next minus the source's own next move, where the player is the same (else why not)."""
    if row.player is not None:
        return "player and feedback confounded" if row.confounded else "(the forks' own player)"
    if row.vs_source is None:
        return "—"
    diff = _diff(row.vs_source, row.vs_source_ci_low, row.vs_source_ci_high, row.vs_source_points or 0, 100, 1)
    return f"{diff}, p {_p(row.vs_source_p)} ({TEST_NAMES.get(row.vs_source_test or '', row.vs_source_test)})"


def forks_notes(report: Report) -> list[str]:
    """Under the repairs table, one line each: which source's-own rows another player played (the
    difference is then one of players and feedback at once), which the forks' own player did; then
    the null results against the source's own, rows of one reason on one line."""
    notes = []
    for model in dict.fromkeys(r.model for r in report.forks):
        own = [r for r in report.forks if r.model == model and r.player is not None]
        others = sorted({str(r.player) for r in own if r.confounded})
        if others:
            notes.append(
                f"{model}'s forks beside source's-own rows of {', '.join(others)} (the player column): "
                "another player under its own feedback, so player and feedback are confounded, no contrast"
            )
        if any(not r.confounded for r in own):
            notes.append(
                f"{model}'s source's-own rows by {model}: its own next move at the same points (vs source's own)"
            )
    few = sorted({int(r.tasks or 0) for r in report.forks if r.player is None and r.too_few_tasks})
    if few:
        notes.append(
            f"no intervals where the forks hold {' or '.join(map(str, few))} task{'s' if few != [1] else ''}: "
            f"too few for one ({MIN_CLUSTERS} needed, as for the contrasts)"
        )
    lines = []
    for r in report.forks:
        if r.vs_source_p is None or r.vs_source_p < report.meta.alpha:
            continue
        suite = getattr(r, C.suite, "")
        several = len({getattr(f, C.suite, "") for f in report.forks}) > 1
        name = f"{r.model} {r.condition} vs source's own" + (f" ({suite})" if several and suite else "")
        lines.append(
            (name, null_reason(r.vs_source_p, r.vs_source_mde, report.meta.alpha, f"{r.vs_source_points} points"))
        )
    return notes + merged(lines)
