"""The report's first page (results.first_page): a screen per suite whose every row names its player,
one line for a family that no test can call at its size, and the rest behind --details.

The records are played by the four reference agents (no model) on two suites of two tasks each:
every contrast has two pairs, which no exact test can make significant."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from results import build_report, load, render_report
from results.formats import beyond_reach, can_reach, units_to_reach
from results.report_model import Report
from results.tables import render_table

AGENTS = ("agent:gold", "agent:reader", "agent:random", "agent:stubborn")
SUITES = ("bank-disputes", "tools-travel")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> list[Path]:
    from harness.cli import app

    folder = tmp_path_factory.mktemp("first")
    for suite in SUITES:
        done = CliRunner().invoke(
            app,
            ["run", "--suite", suite, "--model", ",".join(AGENTS), "--conditions",
             "raw,loc_obs,allowed_prose,allowed_json", "--tasks", "2", "--out", str(folder / suite)],
        )  # fmt: skip
        assert done.exit_code == 0, done.output
    return [folder / s for s in SUITES]


@pytest.fixture(scope="module")
def report(runs: list[Path]) -> Report:
    return build_report(load(runs))


def test_the_first_page_is_a_screen_per_suite_and_every_row_names_its_player(runs, report):
    page = render_report(load(runs), width=80, details=False)
    details = render_table(report, width=80)
    lines = page.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert len(lines) < 100 < len(details.splitlines())  # 2 suites; the details run to hundreds
    rows = [ln for ln in lines if ln.startswith(("agent:gold ", "agent:reader ", "agent:random ", "agent:stubborn "))]
    # per suite: a solved row per player, and a contrasts row per player (one where no pair differs)
    # plus the reader's four
    assert len(rows) == len(SUITES) * (len(AGENTS) + len(AGENTS) - 1 + 4)
    assert page.count("+0.0, all alike") == len(SUITES) * 3  # gold, random, stubborn: arms alike
    for suite in SUITES:
        assert f"{suite}: solved/N per player and condition" in page
    assert "--details" in lines[-1] or "--details" in lines[-2]


def test_a_family_too_small_to_reach_significance_is_one_line_never_no_difference(runs, report):
    page = " ".join(render_report(load(runs), width=80, details=False).split())
    said = "none of these 16 comparisons can reach p < 0.05 with 2 pairs each, Holm over 4 per family: run ≥ 8 tasks"
    assert page.count(said) == len(SUITES)  # once a suite, not a note per row
    details = " ".join(render_table(report, width=80).split())
    assert "no difference found" not in page + details
    assert details.count("none of these 32 comparisons can reach p < 0.05") == 1
    # the reader's +100 points over two pairs: no bootstrap interval (two pairs are too few for one)
    reader = [c for c in report.contrasts if c.model == "agent:reader" and c.diff == 1.0]
    assert reader and all(c.ci_low is None and c.ci_high is None for c in reader)


def test_the_smallest_size_that_can_reach_significance():
    # McNemar's smallest p on n pairs is 2 / 2^n: 6 pairs reach 0.05 alone, 8 under Holm over 4
    assert not can_reach(5, 0.05) and can_reach(6, 0.05)
    assert not can_reach(7, 0.05, 4) and can_reach(8, 0.05, 4)
    assert units_to_reach(0.05) == 6 and units_to_reach(0.05, 4) == 8 and units_to_reach(0.01, 4) == 10
    assert beyond_reach(1, 2, "pairs", 0.05, 1).startswith(
        "this comparison cannot reach p < 0.05 with 2 pairs: run ≥ 6"
    )


def test_at_80_columns_after_an_error_keeps_the_shares_that_carry_the_answer(report):
    text = render_table(report, width=60)
    section = text[text.index("After an error") :]
    # the reader repairs with the same function and other arguments: that column stays, the empty go
    block = section[: section.index("\n\n")]
    assert "args" in block and "(at most 0.0%)" in section
