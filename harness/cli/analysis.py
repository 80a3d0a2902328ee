"""`report`, `plot` and `export`: the analysis commands over run directories.

Bad input (no records, mixed specs, an absent condition, an unknown format) raises a `UserError`
(`results.RecordsError`, `results.UsageError`), which the guard turns into one line and exit code 2.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Annotated

import typer

from common.errors import UserError
from harness.cli.common import echo, group, split_list

app = group()

Dirs = Annotated[list[Path], typer.Argument(help="run directories (or records.jsonl files)", show_default=False)]


@app.command()
def report(
    dirs: Dirs,
    contrasts: Annotated[str | None, typer.Option(help='e.g. "allowed_json-raw,allowed_prose-raw"; default: the paper\'s planned contrasts present')] = None,
    by: Annotated[str | None, typer.Option(help="extra grouping columns, e.g. model,budget")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | md | csv | latex | json")] = "table",
) -> None:
    """Solved/N with Wilson CIs, paired contrasts and the paper's numbers side by side."""
    # results (scipy, statsmodels) is imported here, not at start-up: `run` does not need it
    from results import FORMATS, load, render_report

    if fmt not in FORMATS:  # before reading records: a typo should not wait for a big load
        raise UserError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")
    width = max(120, shutil.get_terminal_size((180, 40)).columns)
    echo(render_report(load(dirs), contrasts=contrasts, by=split_list(by), fmt=fmt, width=width).rstrip("\n"))


@app.command()
def plot(
    dirs: Dirs,
    out: Annotated[Path, typer.Option("--out", help="folder for the PNG and PDF figures")] = Path("figures"),
) -> None:
    """Success by condition, success vs budget, tokens per success vs success, repair funnel."""
    from results.plots import save_figures  # matplotlib only when plotting

    from results import load

    for p in save_figures(load(dirs), out):
        echo(str(p))


@app.command()
def export(
    dirs: Dirs,
    parquet: Annotated[Path, typer.Option("--parquet", help="output .parquet file")],
) -> None:
    """Write the episode frame (one row per episode) as Parquet."""
    from results import load, to_parquet

    df = load(dirs)
    path = to_parquet(df, parquet)
    echo(f"{len(df)} episodes -> {path}")
