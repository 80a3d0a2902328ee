"""Reports: every format, the paper beside ours, and a stable JSON structure."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from results import UsageError, build_report, load, render_report, wilson
from results.report_model import SCHEMA


def test_json_structure_and_paper_cells(two_model_run: Path) -> None:
    out = render_report(load(two_model_run), fmt="json")
    report = json.loads(out)
    assert report["schema"] == SCHEMA
    assert sorted(report) == [
        "cells",
        "contrasts",
        "dynamics",
        "failures",
        "gaps",
        "headline",
        "meta",
        "references",
        "schema",
        "unpaired",
    ]
    assert report["meta"]["contrast_source"] == "planned"
    assert report["meta"]["contrasts"] == [
        "allowed_prose-raw",
        "allowed_json-raw",
        "allowed_json-allowed_prose",
        "allowed_json-loc_obs",
    ]
    cells = {(c["model"], c["condition"]): c for c in report["cells"]}
    local = cells[("local", "raw")]["paper"]
    assert local["note"] == "different model, no published reference"
    assert local["solved"] is None and local["inside_ci"] is None
    qwen = cells[("qwen2.5-coder-14b-awq", "allowed_json")]
    assert (qwen["paper"]["solved"], qwen["paper"]["calls"]) == (36, 130)
    lo, hi = wilson(9, 10)
    assert qwen["paper"]["inside_ci"] is (lo <= 36 / 50 <= hi)
    assert "ours n=10 of the paper's 50 games" in qwen["paper"]["note"]
    # contrasts carry the paper's difference (from its primary table) for the mapped model only
    rows = {(r["model"], r["contrast"]): r for r in report["contrasts"]}
    assert rows[("qwen2.5-coder-14b-awq", "allowed_json-raw")]["paper_diff"] == pytest.approx((36 - 14) / 50)
    assert rows[("local", "allowed_json-raw")]["paper_diff"] is None
    assert len(report["contrasts"]) == 8  # 4 contrasts x 2 models


def test_paper_outside_our_ci_is_said(kit, tmp_path: Path) -> None:
    # 10/10 solved under raw: Wilson low bound ~0.72, far above the paper's 14/50
    recs = [kit.make(t, "raw", True) for t in range(10)]
    report = build_report(load(kit.write(tmp_path / "hi", recs)))
    assert report.cells[0].paper.inside_ci is False
    assert report.meta.contrast_source == "none" and report.contrasts == []


def test_json_is_stable(paper_run: Path) -> None:
    df = load(paper_run)
    one, two = render_report(df, fmt="json"), render_report(df, fmt="json")
    assert one == two
    assert list(json.loads(one)) == sorted(json.loads(one))
    assert "NaN" not in one


def test_contrasts_asked_and_by(kit, tmp_path: Path) -> None:
    recs = [
        kit.make(t, c, t < (3 if c == "raw" else 6), budget=b)
        for b in (2, 4)
        for c in ("raw", "allowed_json")
        for t in range(8)
    ]
    df = load(kit.write(tmp_path / "b", recs))
    report = build_report(df, contrasts="allowed_json-raw", by=["model", "budget"])
    assert report.meta.group_by == ["model", "budget"]
    # the group columns ride along as a row's extra fields
    assert [(r.model_dump()["budget"], r.a_only, r.b_only) for r in report.contrasts] == [(2, 3, 0), (4, 3, 0)]
    budget2 = [c for c in report.cells if c.model_dump()["budget"] == 2][0].paper
    assert budget2.solved is None and budget2.note.startswith("budget 2:")
    with pytest.raises(UsageError, match="absent"):
        build_report(df, contrasts="allowed_prose-raw")


def test_table_md_csv_latex(paper_run: Path) -> None:
    df = load(paper_run)
    table = render_report(df, fmt="table")
    assert "9/10" in table and "36/50" in table and "allowed_json-raw" in table
    md = render_report(df, fmt="md")
    assert "| allowed_json | qwen2.5-coder-14b-awq | 9/10 |" in md
    csv = render_report(df, fmt="csv")
    blocks = {b.split("\n", 1)[0]: b.split("\n", 1)[1] for b in csv.strip().split("\n\n")}
    cells = pd.read_csv(io.StringIO(blocks["# cells"]))
    assert cells.set_index("condition").loc["allowed_json", "solved"] == 9
    assert cells.set_index("condition").loc["raw", "paper.solved"] == 14
    contrasts = pd.read_csv(io.StringIO(blocks["# contrasts"]))
    assert contrasts.set_index("contrast").loc["allowed_json-loc_obs", "p_value"] == pytest.approx(0.0625)
    latex = render_report(df, fmt="latex")
    assert "\\begin{tabular}" in latex and "allowed\\_json" in latex


def test_unknown_format(paper_run: Path) -> None:
    with pytest.raises(UsageError, match="unknown format 'xml'; allowed: csv, json, latex, md, table"):
        render_report(load(paper_run), fmt="xml")


def test_harness_errors_shown(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, "raw", t < 2) for t in range(4)] + [kit.make(4, "raw", None)]
    df = load(kit.write(tmp_path / "e", recs))
    report = build_report(df)
    assert report.meta.harness_errors == 1
    assert (report.cells[0].n, report.cells[0].harness_errors) == (4, 1)
    assert "harness errors: 1 (excluded from N)" in render_report(df, fmt="table")


def test_sampling_lane_in_the_report(kit, tmp_path: Path) -> None:
    recs = [
        kit.make(t, c, (t + s) % 3 != 0 or c == "allowed_json", sample_seed=s)
        for t in range(6)
        for s in (3101, 3102, 3103)
        for c in ("raw", "allowed_json")
    ]
    report = build_report(load(kit.write(tmp_path / "s", recs)))
    row = report.contrasts[0]
    extra = row.model_dump()
    assert (row.contrast, extra["lane"], row.test, extra["n_tasks"]) == ("allowed_json-raw", "sampling", "sign_flip", 6)
    assert report.cells[0].sample_seeds == 3
    assert report.cells[0].paper.note.startswith("sampling lane:")
    assert "sampling lane: the per-cell Wilson CIs" in render_report(load(tmp_path / "s"), fmt="md")


def _ci_text(solved: int, n: int) -> str:
    lo, hi = wilson(solved, n)
    return f"{100 * solved / n:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%]"


def test_table_at_80_columns_keeps_every_condition_and_its_ci_whole(two_model_run: Path) -> None:
    df = load(two_model_run)
    text = render_report(df, fmt="table", width=80)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= 80 and "…" not in text
    cells = build_report(df).cells
    assert len(cells) == 8
    for c in cells:
        # the condition name and its rate with the whole CI share one row of the model's table
        assert any(
            line.startswith(c.condition + " ") and f"{c.solved}/{c.n}" in line and _ci_text(c.solved, c.n) in line
            for line in lines
        ), (c.condition, c.group(["model"]))
    assert "rate [95% CI]" in text and "left out at 80 columns" in text
    wide = render_report(df, fmt="table", width=220)
    assert "left out" not in wide and "tokens/success" in wide and "words/success" in wide


def test_reference_tables_only_where_they_apply(kit, tmp_path: Path, two_model_run: Path) -> None:
    recs = [
        kit.make(t, c, t == 0, suite="bank-disputes", model="local") for c in ("raw", "allowed_json") for t in range(4)
    ]
    bank = render_report(load(kit.write(tmp_path / "bank", recs)), fmt="table", width=120)
    assert "paper" not in bank and "budget lane" not in bank and "Self-Reflective" not in bank
    assert "PAPER.md" not in bank
    paper_suite = render_report(load(two_model_run), fmt="table", width=160)
    assert "paper: Ray & Goyal" in paper_suite and "PAPER.md" not in paper_suite and "budget lane" not in paper_suite
    assert "Self-Reflective" not in paper_suite
    assert "Self-Reflective" in render_report(load(two_model_run), fmt="table", width=160, headline=True)
    assert "headline" in json.loads(render_report(load(two_model_run), fmt="json"))  # json keeps every section


@pytest.mark.parametrize("by", [None, ["model", "budget"], ["extra.protocol"], ["end_reason"]])
def test_report_of_its_columns_only_is_the_full_report(kit, tmp_path: Path, by: list[str] | None) -> None:
    """The report CLI loads `report_columns(by)` only: every column the report reads must be among them."""
    from results.report import report_columns

    recs = [
        kit.make(
            t,
            c,
            (t + s) % 3 != 0 or c == "allowed_json",
            sample_seed=s,
            budget=b,
            usage_missing=int(t == 1),
            prompt_tokens=None if t == 1 else 100,
            fenced_answers=t % 2,
        )
        for t in range(5)
        for s in (3101, 3102)
        for b in (2, 4)
        for c in ("raw", "loc_obs", "allowed_json")
    ]
    recs += [kit.make(7, c, None) for c in ("raw", "allowed_json")]
    run = kit.write(tmp_path / "cols", recs)
    full = render_report(load(run), by=by, fmt="json", contrasts="allowed_json-raw,loc_obs-raw")
    some = render_report(
        load(run, columns=report_columns(by)), by=by, fmt="json", contrasts="allowed_json-raw,loc_obs-raw"
    )
    assert some == full
    assert json.loads(some)["cells"] and json.loads(some)["contrasts"]


def test_unknown_by_column_names_every_recorded_column(paper_run: Path) -> None:
    from results.report import report_columns

    with pytest.raises(UsageError) as full:
        build_report(load(paper_run), by=["colour"])
    with pytest.raises(UsageError) as some:
        build_report(load(paper_run, columns=report_columns(["colour"])), by=["colour"])
    assert str(some.value) == str(full.value) and "calls" in str(full.value)


def test_a_cell_of_harness_errors_only_has_no_interval_to_hold_the_paper(kit, tmp_path: Path) -> None:
    # --by end_reason puts the harness errors in cells of their own: n = 0, no Wilson interval
    recs = [kit.make(t, "raw", t < 3) for t in range(6)] + [kit.make(t, "raw", None) for t in range(6, 8)]
    out = json.loads(render_report(load(kit.write(tmp_path / "e", recs)), fmt="json", by=["model", "end_reason"]))
    cells = [c for c in out["cells"] if c.get("end_reason") == "harness_error"]
    assert cells and all(c["paper"]["inside_ci"] is None for c in cells)
