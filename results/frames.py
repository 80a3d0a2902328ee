"""The report's sections as frames of display strings, one per section (`SECTIONS`), with their titles.

`results.tables` renders them (a rich table fitted to the width, markdown, CSV, LaTeX); the JSON
format is the typed report itself (`results.report_model.Report`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from results.columns import C
from results.contrasts import P_FLOOR
from results.dynamics import SHOWN_K
from results.grid import ERRORS_ONLY, NOT_RUN, PARTIAL
from results.report_model import ImportRow, Report

KEY_ORDER = (C.condition, C.model, C.suite, C.budget, C.sample_seed)
TEST_NAMES = {"mcnemar_exact": "McNemar", "sign_flip": "sign-flip", "too_few_tasks": "too few tasks"}


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _p(x: float | None) -> str:
    """One p-value format: four decimals from 1e-4 up, scientific below (as the JSON keeps six
    significant digits there: results.report._rounded), a p at the floor a bound, never 0."""
    if x is None:
        return "—"
    if x <= P_FLOOR:
        return f"< {P_FLOOR:.0e}"
    return f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}"


def _yes(x: bool | None) -> str:
    return "—" if x is None else ("yes" if x else "no")


def has_paper(report: Report) -> bool:
    """The paper's columns apply: some cell has a published reference (the paper's suite, model, budget)."""
    return any(c.paper.solved is not None for c in report.cells)


PAPER_COLUMNS = ("paper", "paper calls/ep", "paper in CI", "paper note", "paper diff")


def cells_frame(report: Report) -> pd.DataFrame:
    g = report.meta.group_by
    rows = []
    for r in report.cells:
        p = r.paper
        theirs = "—" if p.solved is None else f"{p.solved}/{p.n} ({_pct(p.rate)})"
        rows.append(
            {
                "condition": r.condition,
                **r.group(g),
                "solved/N": f"{r.solved}/{r.n}",
                "rate [95% CI]": f"{_pct(r.rate)} [{_pct(r.ci_low)}, {_pct(r.ci_high)}]",
                "errors": r.harness_errors,
                "usage unknown": r.usage_unknown,
                "calls/ep": _num(r.model_calls_mean, 2),
                "tokens/success": _num(r.tokens_per_success, 0),
                "words/success": _num(r.words_per_success, 0),
                "1st valid": _pct(r.first_call_valid_rate),
                "repaired": _pct(r.repaired_rate),
                "paper": theirs,
                "paper calls/ep": _num(p.calls_per_game, 2),
                "paper in CI": _yes(p.inside_ci),
                # the model/condition labels are in the json; the table keeps only what qualifies a cell
                "paper note": p.note.split("; ", 1)[1]
                if p.solved is not None and "; " in p.note
                else ("" if p.solved is not None else p.note),
            }
        )
    frame = pd.DataFrame(rows)
    if rows and not has_paper(report):
        frame = frame.drop(columns=[c for c in PAPER_COLUMNS if c in frame])
    # the column only earns its width when a server left usage out
    return frame.drop(columns="usage unknown") if rows and not any(r.usage_unknown for r in report.cells) else frame


def _diff(
    diff: float | None,
    low: float | None,
    high: float | None,
    pairs: int,
    scale: float,
    digits: int,
    tasks: int | None = None,
) -> str:
    """A difference with its CI; a contrast of one pair has none (results.contrasts), nor one of
    too few tasks where the task is the unit (`tasks`), and it says which."""
    if diff is None:
        return "—"
    if (low is None or high is None) and tasks is not None:
        return f"{scale * diff:+.{digits}f} [no CI: {tasks} task{'s' if tasks != 1 else ''}]"
    if low is None or high is None:
        return f"{scale * diff:+.{digits}f} [no CI: {pairs} pair{'s' if pairs != 1 else ''}]"
    return f"{scale * diff:+.{digits}f} [{scale * low:+.{digits}f}, {scale * high:+.{digits}f}]"


def _too_few(row: Any) -> int | None:
    """The task count of a contrast whose tasks were too few for a clustered test (else None)."""
    return int(getattr(row, "n_tasks", 0) or 0) if row.test == "too_few_tasks" else None


def contrasts_frame(report: Report) -> pd.DataFrame:
    g = [c for c in report.meta.group_by if c != C.condition]
    rows = []
    for r in report.contrasts:
        rows.append(
            {
                "contrast": r.contrast,
                **r.group(g),
                "pairs": r.n_pairs,
                "diff pts [95% CI]": _diff(r.diff, r.ci_low, r.ci_high, r.n_pairs, 100, 1, _too_few(r)),
                "A only/B only": f"{r.a_only}/{r.b_only}",
                "test": TEST_NAMES.get(r.test, r.test),
                "p": _p(r.p_value),
                "p Holm": _p(r.p_holm),
                "calls diff [95% CI]": _diff(r.calls_diff, r.calls_ci_low, r.calls_ci_high, r.n_pairs, 1, 2),
                "calls p Holm": _p(r.calls_p_holm),
                "paper diff": "—" if r.paper_diff is None else f"{100 * r.paper_diff:+.1f}",
                "paper in CI": _yes(r.paper_inside_ci),
                "unpaired": r.n_unpaired,
            }
        )
    frame = pd.DataFrame(rows)
    if rows and all(r.paper_diff is None for r in report.contrasts):
        frame = frame.drop(columns=["paper diff", "paper in CI"])
    return frame


FAILURE_TEXT = "final failure of unsolved episodes (count)"


def failures_frame(report: Report) -> pd.DataFrame:
    g = report.meta.group_by
    out: dict[tuple[Any, ...], list[str]] = {}
    for r in report.failures:
        key = (r.condition, *r.group(g).values())
        out.setdefault(key, []).append(f"{r.final_failure} {r.count}")  # shares: json and csv
    return pd.DataFrame(
        [{**dict(zip([C.condition, *g], k, strict=True)), FAILURE_TEXT: ", ".join(v)} for k, v in out.items()]
    )


def dynamics_frame(report: Report) -> pd.DataFrame:
    """How each cell repaired (results.dynamics); every k of recovery@k and pass^k is in the JSON."""
    g = report.meta.group_by
    rows = []
    for r in report.dynamics:
        shown = [str(k) for k in SHOWN_K if str(k) in r.recovery_at]
        pass_k = ", ".join(f"{_num(v, 2)}" for v in r.pass_k.values()) + (" (flat: greedy)" if r.pass_k_flat else "")
        rows.append(
            {
                "condition": r.condition,
                **r.group(g),
                "retries": r.retries,
                "identical": _pct(r.identical_resubmission),
                "rec@1 [95% CI]": f"{_pct(r.recovery_at.get('1'))} "
                f"[{_pct(r.recovery_at_1_ci_low)}, {_pct(r.recovery_at_1_ci_high)}]",
                **{f"rec@{k}": _pct(r.recovery_at[k]) for k in shown[1:]},
                "pass^k": pass_k,
                "overhead tok/ep": _num(r.retry_overhead_tokens_per_episode, 0),
                "overhead tok/success": _num(r.retry_overhead_tokens_per_success, 0),
                "preventable": (
                    f"{r.schema_rejections}/{r.rejections} ({_pct(r.preventable_share)})" if r.rejections else "—"
                ),
                "side effects": r.constrained_rejections,
            }
        )
    return pd.DataFrame(rows)


def _not_run(report: Report) -> set[tuple[str, ...]]:
    return {tuple(g.group(list(GAP_KEY)).values()) for g in report.gaps if g.status == NOT_RUN}


GAP_KEY = (C.model, C.suite, C.condition, C.budget, C.sample_seed)


def unpaired_frame(report: Report) -> pd.DataFrame:
    """Episodes without a partner, less those whose partner's whole cell never ran: the gaps
    section names those cells once, instead of one line per task."""
    never = _not_run(report)
    rows = []
    for r in report.section("unpaired"):
        absent = [r[arm] for arm, status in (("a", r["status_a"]), ("b", r["status_b"])) if status == "missing"]
        if any(
            tuple(str(v) for v in (r[C.model], r[C.suite], cond, r[C.budget], r[C.sample_seed])) in never
            for cond in absent
        ):
            continue
        rows.append(r)
    return pd.DataFrame(rows)


def gaps_frame(report: Report) -> pd.DataFrame:
    """One line per suite, status and set of conditions, naming the models it holds for: a run
    that never started is one line, not one per model and condition."""
    by_model: dict[tuple[Any, ...], list[str]] = {}
    for g in report.gaps:
        what = g.status if g.status != PARTIAL else f"partial ({g.episodes - g.harness_errors} of {g.expected} tasks)"
        if g.status == NOT_RUN and not g.run_started:
            what = "never started"
        elif g.status == ERRORS_ONLY:
            what += f" ({g.harness_errors} episodes)"
        cell = g.group([C.suite, C.budget, C.sample_seed, C.model])
        by_model.setdefault((*cell.values(), what), []).append(g.condition)
    lines: dict[tuple[Any, ...], list[str]] = {}
    for (suite, budget, seed, model, what), conds in by_model.items():
        lines.setdefault((suite, budget, seed, what, ", ".join(conds)), []).append(model)
    frame = pd.DataFrame(
        [
            {
                C.suite: k[0],
                C.budget: k[1],
                C.sample_seed: k[2],
                "status": k[3],
                "conditions": k[4],
                "models": ", ".join(v),
            }
            for k, v in lines.items()
        ]
    )
    # a budget or seed column only where the gaps differ in it
    return frame.drop(columns=[c for c in (C.budget, C.sample_seed) if c in frame and frame[c].nunique() == 1])


def headline_frame(report: Report) -> pd.DataFrame:
    rows = []
    for r in report.headline:
        lo, hi = r.theirs_gain_points
        rlo, rhi = r.theirs_tokens_per_success_ratio
        rows.append(
            {
                **r.group(list(KEY_ORDER)),
                "ours: gain [95% CI]": "—"
                if r.gain_points is None
                else f"{r.gain_points:+.1f} [{r.gain_ci_low_points:+.1f}, {r.gain_ci_high_points:+.1f}] pts",
                "theirs: gain": f"+{lo}..+{hi} pts",
                "overlap": _yes(r.gain_ci_overlaps_theirs),
                "ours: tokens/success raw÷json": _num(r.tokens_per_success_ratio, 2),
                "theirs": f"{rlo}..{rhi}x",
                "ratio inside": _yes(r.ratio_inside_theirs),
            }
        )
    return pd.DataFrame(rows)


def factors_frame(report: Report) -> pd.DataFrame:
    """`report --factors`: each part's (and the form's) pooled paired effect; none unless asked."""
    if report.factors is None:
        return pd.DataFrame()
    rows = [
        {
            C.model: r.model,
            "factor": r.factor,
            "levels": f"{r.level_a} -> {r.level_b}",
            "diff pts [95% CI]": _num(None if r.diff is None else 100 * r.diff)
            + ("" if r.ci_low is None or r.ci_high is None else f" [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]"),
            "p": _p(r.p_value),
            "p Holm": _p(r.p_holm),
            "test": TEST_NAMES.get(r.test or "", r.test or ""),
            "pairs": r.pairs,
            "condition pairs": r.arm_pairs,
        }
        for r in report.factors.rows
    ]
    untestable: dict[str, list[str]] = {}
    for u in report.factors.untestable:
        untestable.setdefault(u.model, []).append(u.factor)
    blank = dict.fromkeys(rows[0], "") if rows else {}
    rows += [
        # "untestable" in the first column, which never drops: a narrow table still says what the names are
        {**blank, C.model: model, "factor": f"untestable: {', '.join(names)}", "levels": "no pair differs in it alone"}
        for model, names in untestable.items()
    ]
    return pd.DataFrame(rows)


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


# an import's ids named under its table: a few, then how many more
SHOWN_IDS = 5


def _few(ids: list[str]) -> str:
    more = len(ids) - SHOWN_IDS
    return ", ".join(ids[:SHOWN_IDS]) + (f" and {more} more (--format json lists them)" if more > 0 else "")


FIDELITY = "faithful / diverged / unverified"
AGREES = "agrees with score file"


def _fidelity(r: ImportRow) -> str:
    """faithful / diverged / unverified, adding up to `replayed`; "unknown" for an import made
    before the replay was compared with the log (records without the fields), and so many unknown
    where some are."""
    if r.fidelity_unknown and r.fidelity_unknown == r.replayed:
        return "unknown"
    counts = f"{r.faithful}/{r.diverged}/{r.unverified}"
    return counts + (f", {r.fidelity_unknown} unknown" if r.fidelity_unknown else "")


def imports_frame(report: Report) -> pd.DataFrame:
    """What each import is (results.imports): a row per model and suite; none for other runs. The
    bfcl-eval column only where the imports were replayed on several releases (one is a note)."""
    rows = [
        {
            C.model: r.model,
            C.suite: r.suite,
            "entries": "—" if r.entries is None else r.entries,
            "replayed": r.replayed,
            "skipped": r.skipped,
            "harness errors": r.harness_errors,
            FIDELITY: _fidelity(r),
            AGREES: "—" if r.verdicts is None else f"{r.agree}/{r.verdicts}",
            "bfcl-eval": r.bfcl_eval or "—",
        }
        for r in report.imports
    ]
    frame = pd.DataFrame(rows)
    if rows and len({r.bfcl_eval for r in report.imports}) == 1:
        frame = frame.drop(columns="bfcl-eval")
    return frame


def imports_notes(report: Report) -> list[str]:
    """What an import's table cannot hold: the release replayed on (when one), the skipped
    entries by cause, where replays diverged, the entries whose verdict differs from the published one."""
    rows = report.imports
    notes = []
    releases = {r.bfcl_eval for r in rows}
    if len(releases) == 1 and rows:
        versions = sorted({str(f.get("bfcl_version")) for r in rows for f in r.files})
        notes.append(f"replayed on bfcl-eval {rows[0].bfcl_eval or '(not recorded)'} (files: {', '.join(versions)})")
    for r in rows:
        where = f"{r.model} {r.suite}"
        for cause, n in r.skipped_by_cause.items():
            notes.append(f"{where}: skipped {n}, {cause}: {_few(r.skipped_ids.get(cause, []))}")
        if r.divergences:
            firsts = [f"{d.task_id} (call {d.call}{': ' + d.cause if d.cause else ''})" for d in r.divergences]
            notes.append(f"{where}: diverged from the log: {_few(firsts)}")
        if r.disagree_ids:
            notes.append(f"{where}: BFCL's checker here differs from the published score: {_few(r.disagree_ids)}")
    if any(r.fidelity_unknown for r in rows):
        notes.append("unknown: replays of an import made before each replay was compared with the file's log")
    if any(r.verdicts is None for r in rows):
        notes.append(f"{AGREES} —: no score file (BFCL's published verdicts) came with that import")
    return notes


# the "after an error" table's columns, in results.dynamics.NEXT's order
NEXT_TITLES = {
    "identical": "identical retry",
    "same_function": "same fn new args",
    "other_function": "other fn",
    "new_plan": "new plan",
    "text": "gave up in text",
    "ended": "ended",
}


def after_error_frame(report: Report) -> pd.DataFrame:
    """What the attempt after each rejection did, per cell (results.dynamics); records with no
    call tool names (older than the field) are left out, and a cell with none is not shown. A
    class the cell's action form lacks is "—"."""
    g = report.meta.group_by
    rows = [
        {
            "condition": r.condition,
            **r.group(g),
            "errors": r.after_error_n,
            # shares of `errors` (each count is in the JSON: after_error_counts)
            **{title: _pct(r.after_error.get(n)) for n, title in NEXT_TITLES.items()},
        }
        for r in report.dynamics
        if r.after_error_n
    ]
    frame = pd.DataFrame(rows)
    # a class no cell's action form has (a new plan, in suites of calls only) is no column
    unknown = [t for t in NEXT_TITLES.values() if t in frame and frame[t].eq("—").all()]
    return frame.drop(columns=unknown)


SECTIONS: dict[str, Callable[[Report], pd.DataFrame]] = {
    "imports": imports_frame,
    "cells": cells_frame,
    "contrasts": contrasts_frame,
    "failures": failures_frame,
    "dynamics": dynamics_frame,
    "after_error": after_error_frame,
    "headline": headline_frame,
    "unpaired": unpaired_frame,
    "gaps": gaps_frame,
    "factors": factors_frame,
    "forks": forks_frame,
}


# what a section says under its tables, beside them
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
    return notes


NOTES: dict[str, Callable[[Report], list[str]]] = {"imports": imports_notes, "forks": forks_notes}
TITLES = {
    "imports": "Imported transcripts (each entry in the files: replayed, skipped or a harness error; faithful: "
    "every call answered with the text the file logged; unverified: no log to compare with; agrees: BFCL's "
    "checker here vs the published score file, of the entries both judged)",
    "forks": "Repairs from recorded failures (fork points: rates given the failure; repaired next: the next answer "
    "holds an accepted call of the failed call's tool; progressed: that call is one of the task's reference calls "
    "or the failed turn was solved; task-clustered bootstrap CI, none on too few tasks; calls/point: model calls "
    "paid per fork episode; replayed = calls before the failure, not paid again)",
    "cells": "Solved per condition (Wilson 95% CI; harness errors excluded from N)",
    "contrasts": "Paired contrasts (A - B; bootstrap CI, exact McNemar or sign-flip, Holm per group)",
    "failures": "Failure taxonomy of the final attempt",
    "dynamics": "Repair dynamics (identical resubmission of retries; recovery@k after the first rejection; "
    "pass^k over seeds; tokens after the first rejection; rejections a schema-constrained decoder prevents)",
    "after_error": "After an error: what the next attempt did (the same action again; for a call or a game command, "
    "the same function with other arguments, another function, or an answer in text, no call; for a plan, a new "
    "plan; nothing, the episode ended; —: not an action of that suite)",
    "headline": "allowed_json vs raw beside the Self-Reflective APIs figures (a different setting: API side, "
    "Anthropic models; shown on request)",
    "unpaired": "Unpaired episodes (left out of the contrasts above)",
    "gaps": "Planned grid cells without full results",
    "factors": "Which part of the feedback does the work (diff = with - without, or second form - first; pooled over "
    "the condition pairs that differ in it alone; the test a contrast of the same arms gets: paired bootstrap CI "
    "and exact McNemar with one pair per task, task-clustered bootstrap and sign-flip with several, none with too "
    "few tasks; Holm per model)",
}
