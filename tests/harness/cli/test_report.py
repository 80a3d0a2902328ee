"""`repair-harness report` off a terminal: 80 columns when piped, COLUMNS respected."""

from __future__ import annotations

import os
import subprocess
import sys

CLI = [sys.executable, "-m", "harness.cli"]


def _piped(args: list[str], columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_piped_report_is_80_columns_and_columns_is_respected(agents_run):
    piped = _piped(["report", str(agents_run), "--details"], None)  # stdout is a pipe: no terminal to ask
    assert max(len(line) for line in piped.splitlines()) <= 80
    wide = _piped(["report", str(agents_run), "--details"], "150")
    assert 80 < max(len(line) for line in wide.splitlines()) <= 150
    assert "(left out at 80 columns" in piped and "(left out at 150" not in wide


def test_the_factor_table_at_80_columns_shows_each_factors_diff_its_ci_and_p_holm(agents_run):
    """The one table that answers the study's question keeps its numbers where people read it (a
    pipe, a file, a narrow terminal): the levels' wording wraps instead."""
    text = _piped(["report", str(agents_run), "--factors"], None)  # a pipe: 80 columns
    section = text[text.index("Which part of the feedback") :]
    table = section[: section.index("\n\n")]
    assert "diff pts" in table and "p Holm" in table, table
    left_out = next((ln for ln in section.splitlines() if ln.startswith("(left out")), "")
    assert "diff pts" not in left_out and "p Holm" not in left_out
    rows = [ln for ln in table.splitlines() if ln.startswith(("allowed", "form"))]
    assert rows and all("[" in ln for ln in rows)  # each tested factor's CI is on its row
