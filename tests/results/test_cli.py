"""report / plot / export through typer, including every bad-input exit."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import typer
from typer.testing import CliRunner

from harness import cli


@pytest.fixture
def app() -> typer.Typer:
    return cli.app


def run(app: typer.Typer, *args: str | Path):
    return CliRunner().invoke(app, [str(a) for a in args])


def test_report_formats(app: typer.Typer, two_model_run: Path) -> None:
    res = run(app, "report", two_model_run)
    assert res.exit_code == 0, res.output
    assert "different model, no published reference" in res.stdout and "36/50" in res.stdout
    res = run(app, "report", two_model_run, "--format", "json", "--contrasts", "allowed_json-raw", "--by", "model")
    assert res.exit_code == 0
    report = json.loads(res.stdout)
    assert report["meta"]["contrasts"] == ["allowed_json-raw"] and report["meta"]["contrast_source"] == "asked"
    for fmt, marker in (("md", "| condition |"), ("csv", "# cells"), ("latex", "\\toprule")):
        res = run(app, "report", two_model_run, "--format", fmt)
        assert res.exit_code == 0 and marker in res.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xml"], "unknown format 'xml'; allowed: table, md, csv, latex, json"),
        (["--contrasts", "allowed_json-traceback"], "condition 'traceback' absent from the records"),
        (["--by", "colour"], "unknown --by column 'colour'"),
    ],
)
def test_bad_arguments_exit_2(app: typer.Typer, paper_run: Path, args: list[str], message: str) -> None:
    res = run(app, "report", paper_run, *args)
    assert res.exit_code == 2
    assert message in res.stderr and "Traceback" not in res.output
    assert res.stderr.count("\n") == 1


def test_bad_records_exit_2(kit, app: typer.Typer, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    mixed = kit.write(tmp_path / "mixed", [kit.make(1, "raw", True), kit.make(2, "raw", True, run_id="other")])
    for target, message in (
        (tmp_path / "empty", "no records.jsonl"),
        (mixed, "several runs mixed"),
        (tmp_path / "nowhere", "no such run directory"),
    ):
        for cmd in (
            ["report", target],
            ["plot", target, "--out", tmp_path / "f"],
            ["export", target, "--parquet", tmp_path / "x.parquet"],
        ):
            res = run(app, *cmd)
            assert res.exit_code == 2, (cmd, res.output)
            assert message in res.stderr and "Traceback" not in res.output


def test_plot_and_export(app: typer.Typer, paper_run: Path, tmp_path: Path) -> None:
    res = run(app, "plot", paper_run, "--out", tmp_path / "figs")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "figs" / "repair_funnel.pdf").exists() and (tmp_path / "figs" / "success_vs_budget.png").exists()
    res = run(app, "export", paper_run, "--parquet", tmp_path / "frame.parquet")
    assert res.exit_code == 0 and "40 episodes" in res.stdout
    frame = pd.read_parquet(tmp_path / "frame.parquet")
    assert len(frame) == 40 and frame["success"].sum() == 4 + 4 + 8 + 9


def test_a_folder_of_run_directories_stands_for_them(app: typer.Typer, kit, tmp_path: Path) -> None:
    kit.write(tmp_path / "demo" / "bank", [kit.make(t, "raw", t == 0, suite="bank-disputes") for t in range(3)])
    kit.write(tmp_path / "demo" / "textworld", [kit.make(t, "raw", False) for t in range(2)])
    res = run(app, "report", tmp_path / "demo", "--format", "json")
    assert res.exit_code == 0, res.stdout
    assert json.loads(res.stdout)["meta"]["episodes"] == 5
