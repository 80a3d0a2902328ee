"""The grids people try first: one task, so every contrast has a single pair (issue 40: the paired
bootstrap over one pair raised in the report, exit 1). A contrast of one pair has no interval and
says so; its test is McNemar's exact p where that is possible, none for one task of a sampling
lane; every format renders it. The records are arithmetic fixtures, except the last test's, which
`agent:reader` plays (no model)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from results import build_report, load, render_report
from results.contrasts import contrasts
from results.report import FORMATS
from results.resampling import sign_flip_p


def _one_task(kit, tmp_path: Path) -> Path:
    """The 1-task reader grid's shape: raw fails in 4 calls, allowed_json repairs in 2."""
    recs = [
        kit.make(0, "raw", False, suite="bank-disputes", model="agent:reader", calls=4),
        kit.make(0, "allowed_json", True, suite="bank-disputes", model="agent:reader", calls=2),
    ]
    return kit.write(tmp_path / "one", recs)


def _one_task_sampled(kit, tmp_path: Path) -> Path:
    """One task under three sample seeds: three pairs, one task (the sampling lane's unit)."""
    recs = [
        kit.make(0, cond, cond == "allowed_json" or seed == 0, sample_seed=seed, calls=1 + seed)
        for cond in ("raw", "allowed_json")
        for seed in range(3)
    ]
    return kit.write(tmp_path / "sampled", recs)


def test_one_pair_has_no_interval_and_mcnemar_on_that_pair(kit, tmp_path: Path) -> None:
    df = load(_one_task(kit, tmp_path))
    (row,) = contrasts(df, [("allowed_json", "raw")]).table.to_dict("records")
    assert (row["n_pairs"], row["diff"], row["a_only"], row["b_only"]) == (1, 1.0, 1, 0)
    assert row["test"] == "mcnemar_exact" and row["p_value"] == 1.0  # exact on one discordant pair
    assert pd.isna(row["ci_low"]) and pd.isna(row["ci_high"])
    # the call difference: its mean, no interval, no sign-flip test of one difference
    assert row["calls_diff"] == -2.0 and pd.isna(row["calls_ci_low"]) and pd.isna(row["calls_p"])


def test_one_task_of_a_sampling_lane_has_no_test(kit, tmp_path: Path) -> None:
    df = load(_one_task_sampled(kit, tmp_path))
    (row,) = contrasts(df, [("allowed_json", "raw")]).table.to_dict("records")
    assert (row["lane"], row["n_pairs"], row["n_tasks"]) == ("sampling", 3, 1)
    assert row["test"] == "too_few_tasks" and pd.isna(row["p_value"]) and pd.isna(row["p_holm"])
    assert pd.isna(row["ci_low"]) and row["diff"] == pytest.approx(2 / 3)


def test_a_sign_flip_needs_two_differences() -> None:
    assert pd.isna(sign_flip_p([1.0])) and pd.isna(sign_flip_p([0.0])) and pd.isna(sign_flip_p([]))
    assert sign_flip_p([1.0, 1.0]) == 0.5  # exact: 2 of the 4 sign patterns are as extreme


@pytest.mark.parametrize("fixture", [_one_task, _one_task_sampled])
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_renders_a_one_pair_contrast(kit, tmp_path: Path, fixture, fmt: str) -> None:
    df = load(fixture(kit, tmp_path))
    text = render_report(df, fmt=fmt, contrasts="allowed_json-raw", width=80)
    pairs = 1 if fixture is _one_task else 3
    if fmt == "json":
        (row,) = json.loads(text)["contrasts"]
        assert row["n_pairs"] == pairs and row["ci_low"] is None and row["ci_high"] is None
        assert row["test"] == ("mcnemar_exact" if pairs == 1 else "too_few_tasks")
    elif fmt == "csv":
        block = text.split("# contrasts\n", 1)[1].split("\n\n", 1)[0]
        (row,) = pd.read_csv(io.StringIO(block)).to_dict("records")
        assert row["n_pairs"] == pairs and pd.isna(row["ci_low"]) and pd.isna(row["ci_high"])
    else:  # table, md, latex: the difference, and why it has no interval
        # one pair; or three pairs of one task, where the task is the unit: too few tasks
        assert ("[no CI: 1 pair]" if pairs == 1 else "[no CI: 1 task]") in text
        assert "+100.0" in text if pairs == 1 else "+66.7" in text


def test_a_one_pair_report_keeps_its_cells_and_their_intervals(kit, tmp_path: Path) -> None:
    """Besides the missing interval, the report is whole: cells with their Wilson CIs, dynamics, failures."""
    report = build_report(load(_one_task(kit, tmp_path)))
    assert [(c.condition, c.solved, c.n) for c in report.cells] == [("raw", 0, 1), ("allowed_json", 1, 1)]
    assert all(c.ci_low is not None and c.ci_high is not None for c in report.cells)
    assert report.meta.contrasts_without_pairs == [] and len(report.contrasts) == 1


def test_the_one_task_reader_grid_reports_in_every_format(tmp_path: Path) -> None:
    """The issue's own commands: `run` the 1-task reader grid, then `report` it in each format."""
    from harness.cli import app

    runner = CliRunner()
    out = tmp_path / "r1"
    played = runner.invoke(
        app,
        [
            "run",
            "--suite",
            "bank-disputes",
            "--model",
            "agent:reader",
            "--conditions",
            "raw,allowed_json",
            "--tasks",
            "1",
            "--out",
            str(out),
        ],
    )
    assert played.exit_code == 0, played.output
    for fmt in ("table", "md", "csv", "latex", "json"):
        done = runner.invoke(app, ["report", str(out), "--format", fmt], env={"COLUMNS": "80"})
        assert done.exit_code == 0 and "Traceback" not in done.output, (fmt, done.output)
    row = json.loads(runner.invoke(app, ["report", str(out), "--format", "json"]).stdout)["contrasts"][0]
    assert row["n_pairs"] == 1 and row["ci_low"] is None
