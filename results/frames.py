"""The report's sections as frames of display strings, one per section (`SECTIONS`), with their titles.

`results.tables` renders them (a rich table fitted to the width, markdown, CSV, LaTeX); the JSON
format is the typed report itself (`results.report_model.Report`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from results.columns import C
from results.dynamics import SHOWN_K
from results.fork_frames import forks_frame, forks_notes
from results.formats import (
    TEST_NAMES,
    _diff,
    _num,
    _p,
    _p_drawn,
    _pct,
    _yes,
)
from results.grid import ERRORS_ONLY, NOT_RUN, PARTIAL
from results.import_frames import imports_frame, imports_notes
from results.report_model import Report
from results.section_notes import contrasts_notes, dynamics_notes, factors_notes

KEY_ORDER = (C.condition, C.model, C.suite, C.budget, C.sample_seed)


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
                "p": _p_drawn(r.p_value, r.p_draws, r.p_se),
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
            + (
                ("" if r.diff is None else f" [no CI: {r.pairs} pair{'s' * (r.pairs != 1)}]")
                if r.ci_low is None or r.ci_high is None
                else f" [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]"
            ),
            "p": _p_drawn(r.p_value, r.p_draws, r.p_se),
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


NOTES: dict[str, Callable[[Report], list[str]]] = {
    "dynamics": dynamics_notes,
    "imports": imports_notes,
    "forks": forks_notes,
    "contrasts": contrasts_notes,
    "factors": factors_notes,
}
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
    "dynamics": "Repair dynamics (identical resubmission of retries; recovery@k after the first rejection, an "
    "answer in text that ends the turn a give-up, never a recovery; "
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
