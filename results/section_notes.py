"""What the contrasts', factors' and dynamics' sections say under their tables (`results.frames.NOTES`):
a family too small for its test, the null results with what they could have detected, a Monte Carlo
p's precision, why a fork's recovery@1 and its repaired next can differ."""

from __future__ import annotations

from typing import Any

from results.columns import C
from results.formats import beyond_reach, can_reach, mc_note, null_result
from results.power import POWER
from results.report_model import Report


def _unit_count(row: Any) -> tuple[int, str]:
    """A contrast's size in its test's unit: pairs (one per task), or tasks (several pairs each)."""
    if getattr(row, "lane", "paired") == "sampling" or row.test == "too_few_tasks":
        return int(getattr(row, "n_tasks", 0) or 0), "tasks"
    return int(row.n_pairs), "pairs"


def contrasts_notes(report: Report) -> list[str]:
    """Under the contrasts: a family too small for any test to reach significance, once (how many
    tasks it takes); every other null result with the effect it could have detected (its MDE), one
    line for the rows whose reasons are the same."""
    g = [c for c in report.meta.group_by if c != C.condition]
    family: dict[tuple[str, ...], int] = {}
    for r in report.contrasts:
        key = tuple(r.group(g).values())
        family[key] = family.get(key, 0) + (r.p_value is not None)
    alpha = report.meta.alpha
    short: dict[tuple[int, str, int], int] = {}
    lines: list[tuple[tuple[str, ...], str]] = []
    for r in report.contrasts:
        key = tuple(r.group(g).values())
        units, word = _unit_count(r)
        if not can_reach(units, alpha, max(1, family[key])) or r.p_value is None:
            short[(units, word, family[key])] = short.get((units, word, family[key]), 0) + 1
            continue
        if r.p_holm is None or r.p_holm < alpha:
            continue
        tasks = getattr(r, "n_tasks", None)
        size = f"{r.n_pairs:,} pairs" + (f" in {tasks:,} tasks" if tasks and tasks < r.n_pairs else "")
        seen = "none up to a whole difference" if r.mde is None else f"±{100 * r.mde:.1f} pts"
        # a Monte Carlo p is no exact one: its line says so (the table's p carries its ±)
        drawn = f"; its p a Monte Carlo estimate, ±{r.p_se:.4f} over {r.p_draws:,} draws" if r.p_draws else ""
        lines.append((key, f"{r.contrast} {seen} ({size}{drawn})"))
    notes = [beyond_reach(n, units, word, alpha, k) for (units, word, k), n in short.items()]
    # one line a family: its null results, each with what its test could have detected
    by_family: dict[tuple[str, ...], list[str]] = {}
    for key, said in lines:
        by_family.setdefault(key, []).append(said)
    drawn_note = mc_note([r.p_draws for r in report.contrasts])
    return (
        notes
        + [
            f"{', '.join(key)}: not significant at this size (p Holm ≥ {alpha:g}); detectable with {POWER:.0%} "
            f"power at it: {', '.join(said)} (alpha {alpha:g}/{family[key]}, Holm's first step)"
            for key, said in by_family.items()
        ]
        + ([drawn_note] if drawn_note else [])
    )


def factors_notes(report: Report) -> list[str]:
    if report.factors is None:
        return []
    rows = report.factors.rows
    notes = []
    for r in rows:
        k = sum(o.model == r.model and o.p_value is not None for o in rows)
        name = f"{r.factor} {r.level_a} -> {r.level_b} ({r.model})"
        line = null_result(name, r.p_holm, r.mde, report.meta.alpha, f"{r.pairs:,} pairs", k, r.p_draws, r.p_se)
        notes += [line] if line else []
    drawn = mc_note([r.p_draws for r in rows])
    return notes + ([drawn] if drawn else [])


def dynamics_notes(report: Report) -> list[str]:
    """Where the runs are forks: why recovery@1 and the repairs' repaired next can differ, in one line."""
    if not report.forks:
        return []
    return [
        "forks: recovery@k counts from the fork point (the source's rejected call), so recovery@1 is the share "
        "whose first call was accepted, any tool's; Repairs' repaired next counts only an accepted call of the "
        "failed call's tool: they differ where a fork's first accepted call was another tool's"
    ]
