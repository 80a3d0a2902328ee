"""The report names the planned grid cells that have no results, and why; no test runs on no pairs.

Arithmetic fixtures (no model ran): a demo-shaped folder whose second run never started, a cell
of harness errors only, a cell cut short.
"""

from __future__ import annotations

import json
from pathlib import Path

from results import load, render_report
from results.grid import ERRORS_ONLY, NOT_RUN, PARTIAL, plans, write_plan
from results.report import build_report

CONDITIONS = ["raw", "loc_obs", "allowed_prose", "allowed_json"]


def _spec(suite: str, models: list[str], tasks: int = 2, conditions: list[str] = CONDITIONS) -> dict:
    return {
        "suite": suite,
        "models": models,
        "conditions": conditions,
        "budgets": [4],
        "sample_seeds": [0],
        "tasks": tasks,
        "task_ids": None,
    }


def _partial_demo(kit, tmp_path: Path) -> Path:
    """runs/demo after a kill in its second half's first minutes: bank whole, textworld never started."""
    folder = tmp_path / "demo"
    bank, tw = _spec("bank-disputes", ["local", "agent:gold"]), _spec("paper-textworld", ["local", "agent:gold"])
    write_plan(folder, [("bank", bank), ("textworld", tw)])
    recs = [
        kit.make(f"bank-000{t}", c, c == "allowed_json", model=m, suite="bank-disputes")
        for t in range(2)
        for m in ("local", "agent:gold")
        for c in CONDITIONS
    ]
    kit.write(folder / "bank", recs, run_json={"run_id": "run-a", "spec": bank})
    return folder


def test_a_partial_demo_names_the_half_that_never_ran(kit, tmp_path: Path) -> None:
    folder = _partial_demo(kit, tmp_path)
    planned = plans([folder])
    assert [(Path(p.run_dir).name, p.started) for p in planned] == [("bank", True), ("textworld", False)]
    report = build_report(load([folder / "bank"]), planned=planned)
    assert report.meta.planned_cells == 16
    gaps = {(g.model_dump()["suite"], g.model_dump()["model"], g.condition): g.status for g in report.gaps}
    assert gaps == {("paper-textworld", m, c): NOT_RUN for m in ("local", "agent:gold") for c in CONDITIONS}
    text = render_report(load([folder / "bank"]), fmt="table", width=80, planned=planned)
    assert "grid: 16 cells planned, 8 with full results, 8 without" in text
    gap_table = text[text.index("Planned grid cells without full results") :]
    assert "paper-textworld" in gap_table and "never started" in gap_table and "local, agent:gold" in gap_table
    assert max(len(line) for line in text.splitlines()) <= 80


def test_the_cli_report_on_the_folder_names_the_missing_half(kit, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from harness.cli import app

    folder = _partial_demo(kit, tmp_path)
    result = CliRunner().invoke(app, ["report", str(folder), "--format", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {g["suite"] for g in report["gaps"]} == {"paper-textworld"} and len(report["gaps"]) == 8


def test_harness_errors_only_and_partial_cells(kit, tmp_path: Path) -> None:
    spec = _spec("bank-disputes", ["local"], tasks=3, conditions=["raw", "allowed_json"])
    recs = [kit.make(t, "raw", None, suite="bank-disputes", model="local") for t in range(3)]
    recs += [kit.make(t, "allowed_json", True, suite="bank-disputes", model="local") for t in range(2)]
    run = kit.write(tmp_path / "r", recs, run_json={"run_id": "run-a", "spec": spec})
    report = build_report(load(run), planned=plans([run]))
    by_cond = {g.condition: g for g in report.gaps}
    assert by_cond["raw"].status == ERRORS_ONLY and by_cond["raw"].harness_errors == 3
    assert by_cond["allowed_json"].status == PARTIAL and by_cond["allowed_json"].expected == 3
    text = render_report(load(run), fmt="table", width=100, planned=plans([run]))
    assert "harness errors only (3 episodes)" in text and "partial (2 of 3 tasks)" in text


def test_a_full_grid_has_no_gaps(kit, tmp_path: Path) -> None:
    spec = _spec("bank-disputes", ["local"], tasks=2, conditions=["raw"])
    run = kit.write(
        tmp_path / "r",
        [kit.make(t, "raw", t == 0, suite="bank-disputes", model="local") for t in range(2)],
        run_json={"run_id": "run-a", "spec": spec},
    )
    report = build_report(load(run), planned=plans([run]))
    assert report.gaps == [] and report.meta.planned_cells == 1
    assert "grid: 1 cells planned, 1 with full results\n" in render_report(load(run), planned=plans([run]))


def test_no_paired_test_where_no_task_has_both_arms(kit, tmp_path: Path) -> None:
    """A run stopped in its first task: model local played raw only. No McNemar on 0 pairs; its
    contrast is named as having none, and the never-run cell is not listed task by task."""
    spec = _spec("paper-textworld", ["local", "agent:gold"], tasks=1, conditions=["raw", "allowed_json"])
    recs = [
        kit.make(0, "raw", False, model="local"),
        kit.make(0, "raw", True, model="agent:gold"),
        kit.make(0, "allowed_json", True, model="agent:gold"),
    ]
    run = kit.write(tmp_path / "r", recs, run_json={"run_id": "run-a", "spec": spec})
    report = build_report(load(run), planned=plans([run]))
    assert [(r.model_dump()["model"], r.n_pairs) for r in report.contrasts] == [("agent:gold", 1)]
    assert report.meta.contrasts_without_pairs == ["allowed_json-raw (model local)"]
    text = render_report(load(run), fmt="table", width=120, planned=plans([run]))
    assert "no paired test (no task played under both conditions): allowed_json-raw (model local)" in text
    assert "Unpaired episodes" not in text  # its only unpaired episode is in a cell that never ran


def test_unpaired_rows_are_real_episodes_with_integer_keys(kit, tmp_path: Path) -> None:
    """A contrast with nothing unpaired adds no rows (pandas aligned a Series onto no rows and
    made rows of NaN keys, which turned every budget into 4.0)."""
    recs = [kit.make(t, c, t % 2 == 0, model="m") for t in range(3) for c in ("raw", "allowed_json")]
    recs += [kit.make(0, "loc_obs", True, model="m")]
    report = json.loads(
        render_report(
            load(kit.write(tmp_path / "r", recs)), fmt="json", contrasts="allowed_json-raw,allowed_json-loc_obs"
        )
    )
    assert [u["task_id"] for u in report["unpaired"]] == ["g1", "g2"]
    assert all(isinstance(u["budget"], int) and isinstance(u["sample_seed"], int) for u in report["unpaired"])
    md = render_report(load(kit.write(tmp_path / "r", recs)), fmt="md", contrasts="allowed_json-loc_obs")
    assert "| 4.0 |" not in md and "| 4 |" in md
