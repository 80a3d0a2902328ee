"""The report's first page, what `report` prints in a terminal by default: a screen per suite.

Per suite, two short tables whose every row names its player: solved/N per condition (a row per
player, a column per condition), and the paired contrasts (a row per player and contrast; a
player none of whose pairs differ is one row), with one line where no test of a family can reach
significance at its size; then what a fork, an import or a planned grid adds (results.tables). The
rest (CIs, calls and tokens, failures, repair dynamics, after an error) is `report --details`, and
every format but the terminal's (`--format md`) holds all of it.
"""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
from rich.console import Console

from results.columns import C, is_reference_agent
from results.formats import TEST_NAMES, _diff, _p
from results.report_model import Report
from results.section_notes import contrasts_notes
from results.stats import condition_rank
from results.tables import _meta_lines, print_sections
from results.terminal import fit

# what the first page leaves to `--details` (every section is in --format md and json)
REST = "CIs, calls and tokens, failure codes, repair dynamics, after an error, unpaired episodes"
# the sections printed after the suites' screens, as `--details` prints them
AFTER = ["imports", "forks", "factors", "headline", "gaps"]
PLAYER = "player"


def _player(model: str) -> str:
    """The row's player by its name alone: an `agent:` name is a reference agent (said once, AGENTS)."""
    return model


AGENTS = "agent:… rows are reference agents, not models (a ceiling or a floor; docs/conditions.md, `ceiling`)"


def _players(models: list[str]) -> list[str]:
    """The models first, then the reference agents (their ceiling and floor), each in order met."""
    return sorted(dict.fromkeys(models), key=is_reference_agent)


def _split(report: Report) -> list[str]:
    """The group columns besides model and suite (budget, seeds... where the runs mix them)."""
    return [c for c in report.meta.group_by if c not in (C.model, C.suite, C.condition)]


def _in(report: Report, row: Any, suite: str) -> bool:
    """Whether a row is the suite's (every row is, where the report holds one suite)."""
    return C.suite not in report.meta.group_by or str(getattr(row, C.suite)) == suite


def solved_frame(report: Report, suite: str) -> pd.DataFrame:
    """A row per player (and budget etc. where mixed), a column per condition: solved/N."""
    extra = _split(report)
    cells = [c for c in report.cells if _in(report, c, suite)]
    conditions = sorted({c.condition for c in cells}, key=condition_rank)
    rows: dict[tuple[Any, ...], dict[str, str]] = {}
    for model in _players([str(getattr(c, C.model)) for c in cells]):
        for c in (c for c in cells if str(getattr(c, C.model)) == model):
            key = (model, *c.group(extra).values())
            row = rows.setdefault(key, {PLAYER: _player(model), **c.group(extra)})
            row[c.condition] = f"{c.solved}/{c.n}"
            if c.paper.solved is not None:  # the published cell, a row of its own under the model's
                paper = rows.setdefault((*key, "paper"), {PLAYER: "  the paper's", **c.group(extra)})
                paper[c.condition] = f"{c.paper.solved}/{c.paper.n}"
    frame = pd.DataFrame(list(rows.values()))
    return frame.reindex(columns=[PLAYER, *extra, *conditions]).fillna("—")


def _long(solved: pd.DataFrame) -> pd.DataFrame:
    """The solved table a row per player and condition: where a column per condition is too wide."""
    keys = [c for c in solved.columns if c == PLAYER or c in (C.budget, C.sample_seed, C.constrain)]
    frame = solved.melt(id_vars=keys, var_name=C.condition, value_name="solved/N")
    return frame[frame["solved/N"] != "—"].reset_index(drop=True)


def contrasts_frame(report: Report, suite: str) -> pd.DataFrame:
    """A row per player and contrast: pairs, the difference with its CI (or why none), p Holm. A
    player none of whose pairs differs in any contrast (a reference agent that plays every
    condition alike, a model that solved nothing) is one row: its differences are all 0 by
    construction, and one row says so ("all alike")."""
    extra = _split(report)
    mine = [r for r in report.contrasts if _in(report, r, suite)]
    rows = []
    for model in _players([str(getattr(r, C.model)) for r in mine]):
        theirs = [r for r in mine if str(getattr(r, C.model)) == model]
        if all(r.a_only == 0 and r.b_only == 0 for r in theirs):
            pairs = sorted({r.n_pairs for r in theirs})
            rows.append(
                {
                    PLAYER: _player(model),
                    **{c: "" for c in extra},
                    "contrast": f"all {len(theirs)}" if len(theirs) > 1 else theirs[0].contrast,
                    "pairs": "/".join(str(p) for p in pairs),
                    "diff pts [95% CI]": "+0.0, all alike",
                    "p Holm": _p(theirs[0].p_holm) if len({r.p_holm for r in theirs}) == 1 else "—",
                }
            )
            continue
        for r in theirs:
            tasks = int(getattr(r, "n_tasks", 0) or 0) if r.test == "too_few_tasks" else None
            diff = _diff(r.diff, r.ci_low, r.ci_high, r.n_pairs, 100, 1, tasks)
            rows.append(
                {
                    PLAYER: _player(model),
                    **r.group(extra),
                    # A - B with spaces: a long pair wraps between its conditions, never inside one
                    "contrast": f"{r.a} - {r.b}",
                    "pairs": str(r.n_pairs),
                    # the pairs (or tasks) are beside it: "no CI" says the rest
                    "diff pts [95% CI]": diff.split(" [no CI", 1)[0] + " [no CI]" if "[no CI" in diff else diff,
                    "p Holm": _p(r.p_holm),
                }
            )
    return pd.DataFrame(rows)


def _tests(report: Report, suite: str) -> str:
    names = sorted({TEST_NAMES.get(r.test, r.test) for r in report.contrasts if _in(report, r, suite)})
    return ", ".join(names)


def render_first_page(report: Report, width: int = 80, headline: bool = False) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)

    def say(text: str) -> None:
        console.print(text, highlight=False, markup=False)

    def table(frame: pd.DataFrame, keep: list[str], drop: tuple[str, ...] = (), fold: tuple[str, ...] = ()) -> None:
        shown, dropped = fit(console, frame, keep=keep, drop_order=drop, fold=fold)
        console.print(shown)
        if dropped:
            say(f"(left out at {width} columns: {', '.join(dropped)}; --format md shows every column)")

    for line in _meta_lines(report):
        say(line)
    if any(is_reference_agent(str(getattr(c, C.model))) for c in report.cells):
        say(AGENTS)
    # what was imported comes first: the rest is read from it
    print_sections(console, report, ["imports"])
    split = C.suite in report.meta.group_by
    suites = list(dict.fromkeys(str(getattr(c, C.suite)) for c in report.cells)) if split else []
    suites = suites or [", ".join(report.meta.suites)]
    for suite in suites:
        solved = solved_frame(report, suite)
        if solved.empty:
            continue
        say("")
        say(f"{suite}: solved/N per player and condition (harness errors not in N; Wilson CIs: --details)")
        if fit(console, solved, keep=[PLAYER], drop_order=())[1]:  # too many conditions for a row each
            solved = _long(solved)
        table(solved, [PLAYER, C.condition, "solved/N"])
        if any(c.paper.solved is not None for c in report.cells):  # why a model has no paper's row
            cells = [c for c in report.cells if _in(report, c, suite) and c.paper.solved is None]
            for note in sorted({f"{getattr(c, C.model)}: {c.paper.note}" for c in cells}):
                say(f"  note: {note}")
        contrasts = contrasts_frame(report, suite)
        if contrasts.empty:
            continue
        say("")
        tests = _tests(report, suite)
        say(f"{suite}: paired contrasts, A - B in points ({tests}; p Holm over each player's contrasts)")
        table(contrasts, [PLAYER, "contrast", "diff pts [95% CI]", "p Holm"], ("pairs",), ("contrast",))
        rows = [r for r in report.contrasts if _in(report, r, suite)]
        for note in contrasts_notes(report.model_copy(update={"contrasts": rows})):
            say(f"  note: {note}")
    after = [n for n in AFTER if n != "imports" and (headline or n != "headline")]
    if report.imports:  # a real model's transcripts: what it did after an error is the page's point
        after.append("after_error")
    print_sections(console, report, after)
    say("")
    say(f"more: report --details ({REST}); --format md or json: everything")
    return out.getvalue()
