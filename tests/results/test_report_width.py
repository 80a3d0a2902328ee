"""The report at any width shows a column whole or names it as left out (issue 40: at 80 columns
two suites side by side cut `preventable` to `preventab` and its values to `8/8 (100.`).

The records are played by the four reference agents (no model) on two suites, so the repair
dynamics have real values; every row of every section frame is then looked for in the text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from results import build_report, load
from results.columns import C
from results.frames import PAPER_COLUMNS, SECTIONS
from results.report_model import Report
from results.tables import FOLD, render_table

AGENTS = "agent:gold,agent:reader,agent:random,agent:stubborn"


@pytest.fixture(scope="module")
def two_suites(tmp_path_factory) -> Path:
    from harness.cli import app

    folder = tmp_path_factory.mktemp("width")
    for suite in ("bank-disputes", "tools-travel"):
        done = CliRunner().invoke(
            app,
            [
                "run",
                "--suite",
                suite,
                "--model",
                AGENTS,
                "--conditions",
                "raw,loc_obs,allowed_prose,allowed_json",
                "--tasks",
                "2",
                "--out",
                str(folder / suite),
            ],
        )
        assert done.exit_code == 0, done.output
    return folder


@pytest.fixture(scope="module")
def report(two_suites: Path) -> Report:
    return build_report(load([two_suites / "bank-disputes", two_suites / "tools-travel"]))


def _left_out(text: str) -> set[str]:
    """Every column some table names as left out (the note wraps over lines)."""
    flat = " ".join(text.split())
    named: set[str] = set()
    for listed in re.findall(r"\(left out at \d+ columns: (.*?); --format md", flat):
        # a share column is named with the most it holds: "other fn (at most 0.0%)"
        named.update(c.split(" (at most ")[0].strip() for c in listed.split(", "))
    return named


def _in_order(line: str, values: list[str]) -> bool:
    at = 0
    for v in values:
        found = line.find(v, at)
        if found < 0:
            return False
        at = found + len(v)
    return True


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_every_value_is_whole_or_its_column_named_as_left_out(report: Report, width: int) -> None:
    text = render_table(report, width=width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width and "…" not in text
    left_out = _left_out(text)
    checked = 0
    for name, make in SECTIONS.items():
        if name == "headline":  # shown on request only
            continue
        frame = make(report)
        if frame.empty:
            continue
        # two suites: each section's table per model and suite, the suite named in its title
        shown = [
            c
            for c in frame.columns
            if c not in left_out
            and c not in (C.model, C.suite)
            and c not in PAPER_COLUMNS
            and c not in FOLD.get(name, ())
        ]
        if C.suite in frame:  # the titles name each block's suite (they wrap between words)
            assert all(f"{suite}\n" in text or f"{suite} " in text for suite in frame[C.suite]), name
        for col in shown:  # a header wraps between its words, never inside one
            assert all(word in text for word in str(col).split()), (name, col)
        for _, row in frame.iterrows():
            values = [str(row[c]) for c in shown]
            # the row's values, each whole, in their order on one line of the table
            assert any(_in_order(line, values) for line in lines), (width, name, values)
            for col in FOLD.get(name, ()):
                if col in frame and col not in left_out:  # free text wraps between words
                    assert all(w in text for w in str(row[col]).split()), (name, col)
            checked += 1
    assert checked > 40  # cells, contrasts, failures and dynamics of four agents on two suites
    if width <= 80:
        assert "preventable" in left_out or "preventable" in text


def test_the_kept_columns_give_way_last_and_the_first_never(report: Report) -> None:
    narrow = render_table(report, width=40)
    # at 40 columns even kept columns drop, named, while each table keeps its row names
    assert {"rate [95% CI]", "preventable"} & _left_out(narrow)
    for condition in ("raw", "loc_obs", "allowed_prose", "allowed_json"):
        assert any(line.startswith(condition + " ") for line in narrow.splitlines())
    wide = render_table(report, width=220)
    assert "preventable" in wide and "8/8 (100.0%)" in wide
