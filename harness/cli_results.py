"""`report`, `plot` and `export`: the analysis commands, added to the main typer app.

Bad input (no records, mixed specs, an absent condition, an unknown format) prints one line
on stderr and exits with code 2, never a traceback.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer


T = TypeVar("T")

Dirs = Annotated[list[Path], typer.Argument(help="run directories (or records.jsonl files)", show_default=False)]


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(2)


def _guard(action: Callable[[], T]) -> T:
    from results import RecordsError, UsageError

    try:
        return action()
    except (RecordsError, UsageError) as e:
        raise _fail(str(e)) from None


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [s.strip() for s in text.split(",") if s.strip()]


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
        raise _fail(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")
    width = max(120, shutil.get_terminal_size((180, 40)).columns)

    text = _guard(lambda: render_report(load(dirs), contrasts=contrasts, by=_split(by), fmt=fmt, width=width))
    typer.echo(text.rstrip("\n"))


def plot(
    dirs: Dirs,
    out: Annotated[Path, typer.Option("--out", help="folder for the PNG and PDF figures")] = Path("figures"),
) -> None:
    """Success by condition, success vs budget, tokens per success vs success, repair funnel."""
    from results.plots import save_figures  # matplotlib only when plotting

    from results import load

    paths = _guard(lambda: save_figures(load(dirs), out))
    for p in paths:
        typer.echo(str(p))


def export(
    dirs: Dirs,
    parquet: Annotated[Path, typer.Option("--parquet", help="output .parquet file")],
) -> None:
    """Write the episode frame (one row per episode) as Parquet."""
    from results import load, to_parquet

    df = _guard(lambda: load(dirs))
    path = to_parquet(df, parquet)
    typer.echo(f"{len(df)} episodes -> {path}")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
    app.command("plot")(plot)
    app.command("export")(export)
