"""Text renderings of a typed report (`results.report_model.Report`): rich table, markdown, CSV, LaTeX."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pandas as pd
from rich.console import Console

from envs.study import BUDGET as STUDY_BUDGET
from results.columns import C, is_reference_agent
from results.dynamics import SHOWN_K
from results.grid import ERRORS_ONLY, NOT_RUN, PARTIAL
from results.paper import SUITE as PAPER_SUITE
from results.report_model import Report
from results.terminal import fit

KEY_ORDER = (C.condition, C.model, C.suite, C.budget, C.sample_seed)
TEST_NAMES = {"mcnemar_exact": "McNemar", "sign_flip": "sign-flip"}


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, digits: int = 1) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def _p(x: float | None) -> str:
    return "—" if x is None else (f"{x:.4f}" if x >= 1e-4 else f"{x:.1e}")


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


def contrasts_frame(report: Report) -> pd.DataFrame:
    g = [c for c in report.meta.group_by if c != C.condition]
    rows = []
    for r in report.contrasts:
        rows.append(
            {
                "contrast": r.contrast,
                **r.group(g),
                "pairs": r.n_pairs,
                "diff pts [95% CI]": f"{100 * r.diff:+.1f} [{100 * r.ci_low:+.1f}, {100 * r.ci_high:+.1f}]"
                if r.diff is not None and r.ci_low is not None and r.ci_high is not None
                else "—",
                "A only/B only": f"{r.a_only}/{r.b_only}",
                "test": TEST_NAMES.get(r.test, r.test),
                "p": _p(r.p_value),
                "p Holm": _p(r.p_holm),
                "calls diff [95% CI]": "—"
                if r.calls_diff is None
                else f"{r.calls_diff:+.2f} [{r.calls_ci_low:+.2f}, {r.calls_ci_high:+.2f}]",
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


SECTIONS: dict[str, Callable[[Report], pd.DataFrame]] = {
    "cells": cells_frame,
    "contrasts": contrasts_frame,
    "failures": failures_frame,
    "dynamics": dynamics_frame,
    "headline": headline_frame,
    "unpaired": unpaired_frame,
    "gaps": gaps_frame,
}
TITLES = {
    "cells": "Solved per condition (Wilson 95% CI; harness errors excluded from N)",
    "contrasts": "Paired contrasts (A - B; bootstrap CI, exact McNemar or sign-flip, Holm per group)",
    "failures": "Failure taxonomy of the final attempt",
    "dynamics": "Repair dynamics (identical resubmission of retries; recovery@k after the first rejection; "
    "pass^k over seeds; tokens after the first rejection; rejections a schema-constrained decoder prevents)",
    "headline": "allowed_json vs raw beside the Self-Reflective APIs figures (a different setting: API side, "
    "Anthropic models; shown on request)",
    "unpaired": "Unpaired episodes (left out of the contrasts above)",
    "gaps": "Planned grid cells without full results",
}


# what each section must always show, and the order its other columns give way at a narrow width
KEEP = {
    "cells": (C.condition, C.model, C.suite, C.budget, C.sample_seed, "solved/N", "rate [95% CI]"),
    "contrasts": ("contrast", C.model, C.suite, C.budget, C.sample_seed, "diff pts [95% CI]"),
    "failures": (C.condition, C.model, C.suite, C.budget, C.sample_seed),
    "dynamics": (C.condition, C.model, C.suite, C.budget, C.constrain, "identical", "rec@1 [95% CI]", "preventable"),
    "headline": (C.model, C.suite, C.budget, "ours: gain [95% CI]", "theirs: gain"),
    "gaps": (C.suite, "status"),
}
DROP_ORDER = {
    "cells": (
        "usage unknown",
        "paper calls/ep",
        "words/success",
        "tokens/success",
        C.repaired,
        "1st valid",
        "paper in CI",
        "calls/ep",
        "errors",
        "paper",
    ),
    "dynamics": ("side effects", "overhead tok/success", "rec@3", "rec@2", "overhead tok/ep", "pass^k", "retries"),
    "contrasts": (
        "unpaired",
        "calls p Holm",
        "calls diff [95% CI]",
        "paper in CI",
        "test",
        "p",
        "A only/B only",
        "paper diff",
        "pairs",
        "p Holm",
    ),
}
FOLD = {"failures": (FAILURE_TEXT,), "gaps": ("conditions", "models")}


def _meta_lines(report: Report) -> list[str]:
    m = report.meta
    contrasts = ", ".join(m.contrasts) or "none"
    lines = [
        f"runs: {', '.join(m.run_dirs)}",
        f"episodes: {m.episodes}, harness errors: {m.harness_errors} (excluded from N)"
        + (f", partial trailing lines ignored: {m.partial_lines}" if m.partial_lines else ""),
        f"contrasts ({m.contrast_source}): {contrasts}; bootstrap {m.n_boot} resamples, seed {m.seed}",
    ]
    if m.protocols or PAPER_SUITE in m.suites:  # the suites with a protocol option are the TextWorld ones
        lines.insert(1, f"protocol played: {', '.join(m.protocols) or 'not recorded'}")
    # the paper's references only where they apply: its suite (or records that predate meta.suites)
    if PAPER_SUITE in m.suites or not m.suites:
        line = f"paper: {report.references.primary}"
        if not has_paper(report):  # say why its columns are absent
            line += "; no paper columns: " + "; ".join(sorted({c.paper.note for c in report.cells}))
        lines.append(line)
        if any(b != STUDY_BUDGET for b in m.budgets):
            lines.append(f"budget lane: {report.references.budget_lane}")
    if m.planned_cells:
        missing = len({(g.run_dir, *g.group(list(GAP_KEY)).values()) for g in report.gaps})
        lines.append(
            f"grid: {m.planned_cells} cells planned, {m.planned_cells - missing} with full results"
            + (f", {missing} without (listed at the end)" if missing else "")
        )
    if m.contrasts_without_pairs:
        lines.append("no paired test (no task played under both conditions): " + "; ".join(m.contrasts_without_pairs))
    if any(c.sample_seeds > 1 for c in report.cells):
        lines.append(
            "sampling lane: the per-cell Wilson CIs count every seed's episode as independent; "
            "the contrasts resample whole tasks"
        )
    return lines


def _frames(report: Report, headline: bool = False) -> list[tuple[str, pd.DataFrame]]:
    return [(name, make(report)) for name, make in SECTIONS.items() if headline or name != "headline"]


def _who(model: str) -> str:
    """A reference agent (harness.agents) is labelled as one: its rate is a ceiling or a floor."""
    if is_reference_agent(model):
        return f"{model} (reference agent, not a model: docs/conditions.md, `ceiling`; it uses no tokens)"
    return model


def render_table(report: Report, width: int = 160, headline: bool = False) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)
    for line in _meta_lines(report):
        console.print(line, highlight=False, markup=False)
    for name, frame in _frames(report, headline):
        if frame.empty:
            continue
        notes: list[str] = []
        if "paper note" in frame:
            # long notes would squeeze every column; they go under the table, once per model
            notes = sorted({f"{r[C.model]}: {r['paper note']}" for _, r in frame.iterrows() if r["paper note"]})
            frame = frame.drop(columns="paper note")
        # one table per model: model names (HF ids) are long, and cells compare within a model
        parts = frame.groupby(C.model, sort=False) if C.model in frame else [(None, frame)]
        for model, part in parts:
            part = part.drop(columns=C.model, errors="ignore")
            # a model the paper did not run has no paper values: its table goes without those columns
            part = part.drop(columns=[c for c in PAPER_COLUMNS if c in part and set(part[c].astype(str)) <= {"—", ""}])
            title = (
                TITLES[name]
                + (", beside the paper" if name == "cells" and "paper" in part else "")
                + (f" — {_who(str(model))}" if model is not None else "")
            )
            console.print()
            console.print(title, highlight=False, markup=False)
            table, dropped = fit(console, part, KEEP.get(name, ()), DROP_ORDER.get(name, ()), FOLD.get(name, ()))
            console.print(table)
            if dropped:
                console.print(
                    f"(left out at {width} columns: {', '.join(dropped)}; --format md shows every column)",
                    highlight=False,
                    markup=False,
                )
        for note in notes:
            console.print(f"  note: {note}", highlight=False, markup=False)
    return out.getvalue()


def _md(frame: pd.DataFrame) -> str:
    def esc(v: object) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    head = "| " + " | ".join(esc(c) for c in frame.columns) + " |"
    rule = "|" + "|".join("---" for _ in frame.columns) + "|"
    body = ["| " + " | ".join(esc(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *body])


def render_md(report: Report, width: int = 0, headline: bool = False) -> str:
    parts = ["\n".join(f"- {line}" for line in _meta_lines(report))]
    for name, frame in _frames(report, headline):
        if not frame.empty:
            parts.append(f"## {TITLES[name]}\n\n{_md(frame)}")
    return "\n\n".join(parts) + "\n"


def render_csv(report: Report, width: int = 0, headline: bool = False) -> str:
    """Raw numbers, one block per section, each opened by a '# name' line (read_csv(comment='#'))."""
    blocks = []
    for name in ("cells", "contrasts", "failures", *(["headline"] if headline else []), "unpaired", "gaps"):
        rows = report.section(name)
        if not rows:
            continue
        flat = pd.json_normalize(rows, sep=".")
        blocks.append(f"# {name}\n" + flat.to_csv(index=False, lineterminator="\n"))
    return "\n".join(blocks)


def render_latex(report: Report, width: int = 0, headline: bool = False) -> str:
    parts = []
    for name, frame in _frames(report, headline):
        if not frame.empty:
            parts.append(f"% {TITLES[name]}\n" + frame.to_latex(index=False, escape=True))
    return "\n".join(parts)


RENDERERS: dict[str, Callable[..., str]] = {
    "table": render_table,
    "md": render_md,
    "csv": render_csv,
    "latex": render_latex,
}
