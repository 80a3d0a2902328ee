"""Text renderings of a typed report (`results.report_model.Report`): rich table, markdown, CSV, LaTeX."""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

import pandas as pd
from rich.console import Console

from envs.study import BUDGET as STUDY_BUDGET
from results.columns import C, is_reference_agent
from results.frames import FAILURE_TEXT, GAP_KEY, NOTES, PAPER_COLUMNS, SECTIONS, TITLES, has_paper
from results.import_frames import AGREES, FIDELITY
from results.paper import SUITE as PAPER_SUITE
from results.report_model import Report
from results.terminal import fit

# what each section must always show, and the order its other columns give way at a narrow width
KEEP = {
    "cells": (C.condition, C.model, C.suite, C.budget, C.sample_seed, "solved/N", "rate [95% CI]"),
    "contrasts": ("contrast", C.model, C.suite, C.budget, C.sample_seed, "diff pts [95% CI]"),
    "failures": (C.condition, C.model, C.suite, C.budget, C.sample_seed),
    "dynamics": (C.condition, C.model, C.suite, C.budget, C.constrain, "identical", "rec@1 [95% CI]", "preventable"),
    "headline": (C.model, C.suite, C.budget, "ours: gain [95% CI]", "theirs: gain"),
    "gaps": (C.suite, "status"),
    # the numbers first: the levels' wording wraps (FOLD) rather than push the effect out
    "factors": ("factor", "diff pts [95% CI]", "p Holm", "levels"),
    "forks": ("condition", "player", "points", "repaired next [95% CI]", "solved [95% CI]", "progressed"),
    "after_error": (C.condition, C.model, C.suite, C.budget, "errors"),
    "imports": (C.suite, "entries", "replayed", "skipped", "harness errors", FIDELITY),
}
DROP_ORDER = {
    "imports": ("bfcl-eval", AGREES),
    "forks": (
        "tok/repair",
        "replayed",
        "calls paid",
        "calls to repair",
        "turn solved [95% CI]",
        C.suite,
        "calls/point",
    ),
    "after_error": ("ended", "same fn new args", "other fn", "new plan", "gave up in text", "identical retry"),
    "factors": ("condition pairs", "pairs", "p"),
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
# sections whose long title is printed once, above the first model's table (the others: the model alone)
TITLED_ONCE = frozenset({"imports"})
FOLD = {"failures": (FAILURE_TEXT,), "gaps": ("conditions", "models"), "factors": ("levels", "factor")}


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
        line = f"protocol played: {', '.join(m.protocols) or 'not recorded'}"
        if m.force_quits_won is not None:  # which verdict the success rates are: BFCL's, and what it changes
            line += (
                f"; success is bfcl evaluate's verdict, its force-quit rule included: {m.force_quits_won} episodes "
                "force-quit in their last turn are won by it (the harness's own rule, a force-quit is lost, would "
                "lose them)"
            )
        lines.insert(1, line)
    # the paper's references only where they apply: its suite (or a report that predates meta.suites;
    # not one of no episode, an import whose entries were all skipped)
    if PAPER_SUITE in m.suites or (not m.suites and m.episodes):
        line = f"paper: {report.references.primary}"
        if not has_paper(report):  # say why its columns are absent
            line += "; no paper columns: " + "; ".join(sorted({c.paper.note for c in report.cells}))
        lines.append(line)
        if any(b != STUDY_BUDGET for b in m.budgets):
            lines.append(f"budget lane: {report.references.budget_lane}")
    if m.planned_cells:
        missing = len({(g.run_dir, *g.group(list(GAP_KEY)).values()) for g in report.gaps})
        if m.shards is not None:
            missing = m.shards["cells_missing"]
            lines.append(
                f"shards: {m.shards['planned']} planned, {m.shards['planned'] - len(m.shards['missing'])} with records"
                + (f"; never ran: {', '.join(m.shards['missing'])}" if m.shards["missing"] else "")
            )
        lines.append(
            f"grid: {m.planned_cells} cells planned, {m.planned_cells - missing} with full results"
            + (f", {missing} without (listed at the end)" if missing else "")
        )
    if m.concurrency:
        lines.append("concurrency: " + "; ".join(f"{model} {how}" for model, how in m.concurrency.items()))
    if m.nondeterministic:
        lines.append(
            "not deterministic at temperature 0 (preflight: two identical greedy requests differed): "
            + ", ".join(m.nondeterministic)
        )
    if m.contrasts_without_pairs:
        lines.append("no paired test (no task played under both conditions): " + "; ".join(m.contrasts_without_pairs))
    if any(c.sample_seeds > 1 for c in report.cells):
        lines.append(
            "sampling lane: the per-cell Wilson CIs count every seed's episode as independent; "
            "the contrasts resample whole tasks"
        )
    return lines


# sections whose columns are shares of one count (each row's sum to 100%): at a narrow width the
# columns that carry least go first, so that what a row did stays on the page
SHARES_FIRST = frozenset({"after_error"})


def _share(value: object) -> float:
    text = str(value)
    return float(text[:-1]) if text.endswith("%") else -1.0


def _by_share(part: pd.DataFrame) -> list[str]:
    """The share columns of `part`, least carried first (the largest share in any row)."""
    shares = [c for c in part.columns if part[c].astype(str).str.endswith("%").any()]
    return sorted(shares, key=lambda c: max(_share(v) for v in part[c]))


def _named(part: pd.DataFrame, column: str) -> str:
    """A dropped column's name, with the most a share column holds in any row (what was left out)."""
    values = [_share(v) for v in part[column]]
    return f"{column} (at most {max(values):.1f}%)" if values and max(values) >= 0 else column


def _frames(report: Report, headline: bool = False) -> list[tuple[str, pd.DataFrame]]:
    return [(name, make(report)) for name, make in SECTIONS.items() if headline or name != "headline"]


def _who(model: str, explained: set[str]) -> str:
    """A reference agent (harness.agents) is labelled as one: its rate is a ceiling or a floor;
    what that means is said the first time only (`explained` holds who was)."""
    if not is_reference_agent(model):
        return model
    if model in explained:
        return f"{model} (reference agent)"
    explained.add(model)
    return f"{model} (reference agent, not a model: docs/conditions.md, `ceiling`; it uses no tokens)"


def _models_first(frame: pd.DataFrame) -> list[tuple[Any, Any, pd.DataFrame]]:
    """One table per model, the models first and the reference agents after them: a report's
    point is the model; the agents are its ceiling and floor. Where the section holds several
    suites, one table per suite too, named in its title: a block never loses which suite it is
    when a narrow terminal drops a column."""
    parts: list[tuple[Any, pd.DataFrame]] = (
        list(frame.groupby(C.model, sort=False)) if C.model in frame else [(None, frame)]
    )
    parts = sorted(parts, key=lambda p: is_reference_agent(str(p[0])))
    if C.suite not in frame or frame[C.suite].nunique() < 2:
        return [(model, None, part) for model, part in parts]
    return [
        (model, suite, block.drop(columns=C.suite))
        for model, part in parts
        for suite, block in part.groupby(C.suite, sort=False)
    ]


def render_table(report: Report, width: int = 160, headline: bool = False) -> str:
    """Every section, each a table per model (and suite); `report --details`."""
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)
    for line in _meta_lines(report):
        console.print(line, highlight=False, markup=False)
    print_sections(console, report, [name for name, _ in _frames(report, headline)])
    return out.getvalue()


def print_sections(console: Console, report: Report, names: list[str], explained: set[str] | None = None) -> None:
    """The sections `names` as tables fitted to the console's width, each with its notes."""
    width = console.width
    explained = set() if explained is None else explained
    for name, make in SECTIONS.items():
        frame = make(report) if name in names else pd.DataFrame()
        if frame.empty:
            continue
        notes: list[str] = []
        if "paper note" in frame:
            # long notes would squeeze every column; they go under the table, once per model
            notes = sorted({f"{r[C.model]}: {r['paper note']}" for _, r in frame.iterrows() if r["paper note"]})
            frame = frame.drop(columns="paper note")
        # one table per model: model names (HF ids) are long, and cells compare within a model
        for i, (model, suite, part) in enumerate(_models_first(frame)):
            part = part.drop(columns=C.model, errors="ignore")
            # a model the paper did not run has no paper values: its table goes without those columns
            part = part.drop(columns=[c for c in PAPER_COLUMNS if c in part and set(part[c].astype(str)) <= {"—", ""}])
            title = (
                ("" if i and name in TITLED_ONCE else TITLES[name])
                + (", beside the paper" if name == "cells" and "paper" in part else "")
                + (f" — {_who(str(model), explained)}" if model is not None else "")
                + (f" — {suite}" if model is None and suite is not None else f", {suite}" if suite is not None else "")
            ).lstrip()
            console.print()
            console.print(title, highlight=False, markup=False)
            drop = _by_share(part) if name in SHARES_FIRST else DROP_ORDER.get(name, ())
            table, dropped = fit(console, part, KEEP.get(name, ()), drop, FOLD.get(name, ()))
            console.print(table)
            if dropped:
                console.print(
                    f"(left out at {width} columns: "
                    f"{', '.join(_named(part, c) if name in SHARES_FIRST else c for c in dropped)}; "
                    "--format md shows every column)",
                    highlight=False,
                    markup=False,
                )
            if "test" in dropped:  # which test gave the p-values stays said
                tests = ", ".join(sorted(set(part["test"].astype(str)) - {""}))
                console.print(f"(test: {tests})", highlight=False, markup=False)
        for note in notes + (NOTES[name](report) if name in NOTES else []):
            console.print(f"  note: {note}", highlight=False, markup=False)


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
            notes = "".join(f"\n- {note}" for note in (NOTES[name](report) if name in NOTES else []))
            parts.append(f"## {TITLES[name]}\n\n{_md(frame)}" + (f"\n{notes}" if notes else ""))
    return "\n\n".join(parts) + "\n"


def render_csv(report: Report, width: int = 0, headline: bool = False) -> str:
    """Raw numbers, one block per section, each opened by a '# name' line (read_csv(comment='#'))."""
    blocks = []
    names = ("imports", "cells", "contrasts", "failures", *(["headline"] if headline else []), "unpaired", "gaps")
    for name in (*names, "factors"):
        if name == "factors":
            rows = [r.model_dump() for r in report.factors.rows] if report.factors is not None else []
        else:
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
