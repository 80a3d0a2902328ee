"""`report`, `plot` and `export`: the analysis commands over run directories.

Bad input (no records, mixed specs, an absent condition, an unknown format) raises a `UserError`
(`results.RecordsError`, `results.UsageError`), which the guard turns into one line and exit code 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envs.errors import UserError
from harness.cli.common import PLUGIN_HELP, echo, group, split_list, terminal_width
from harness.rundir.files import storage_guard, written_whole

app = group()

Dirs = Annotated[
    list[Path],
    typer.Argument(
        help="run directories (or records.jsonl files, or a folder of run directories such as runs/demo)",
        show_default=False,
    ),
]


@app.command()
def report(
    dirs: Dirs,
    contrasts: Annotated[
        str | None,
        typer.Option(help='e.g. "allowed_json-raw,allowed_prose-raw"; default: the paper\'s planned contrasts present'),
    ] = None,
    by: Annotated[str | None, typer.Option(help="extra grouping columns, e.g. model,budget")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table | md | csv | latex | json")] = "table",
    headline: Annotated[
        bool,
        typer.Option(
            help="also set allowed_json vs raw beside the Self-Reflective APIs figures "
            "(a different setting: API side, Anthropic models)"
        ),
    ] = False,
    width: Annotated[
        int | None, typer.Option(min=40, help="table width in columns  [default: the terminal's]", show_default=False)
    ] = None,
    factors: Annotated[
        bool,
        typer.Option(
            help="also each feedback part's (and the form's) paired effect, pooled over the conditions "
            "that differ only in it"
        ),
    ] = False,
    details: Annotated[
        bool,
        typer.Option(
            help="in the terminal, every section (CIs, calls, tokens, failures, repair dynamics, after an error) "
            "instead of the first page, a screen per suite; --format md and the others always hold every section"
        ),
    ] = False,
    plugin: Annotated[list[Path] | None, typer.Option("--plugin", help=PLUGIN_HELP)] = None,
) -> None:
    """Solved/N and paired contrasts, a screen per suite; the paper's numbers beside ours where they apply.

    --details adds the Wilson CIs, calls and tokens, failures, repair dynamics and what came after an error."""
    # results (scipy, statsmodels) is imported here, not at start-up: `run` does not need it
    from results import FORMATS, grid, imports, load, render_report
    from results.load import no_records
    from results.report import report_columns

    if fmt not in FORMATS:  # before reading records: a typo should not wait for a big load
        raise UserError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")
    # hashlib (3 ms): not for --help
    from harness.plugins import load as load_plugins

    load_plugins(plugin or [])
    from harness.progress import steps  # rich: not for --help

    # the steps on stderr for a person reading the table; a format read by a program gets its text alone
    say = steps("report") if fmt == "table" else steps("")
    groups = split_list(by)
    # an import whose entries were all skipped has no records: its run.json is what the report shows
    imported = imports.found(dirs)
    runs = imports.loadable(dirs, imported)
    # only the columns the report reads are kept (not the call logs of every episode)
    columns = report_columns(groups, factors=factors)
    say(f"reading the records of {len(runs)} run folder{'s' * (len(runs) != 1)}")
    df = load(runs, columns=columns) if runs or not imported else no_records(columns)
    say(f"{len(df):,} episodes: the statistics (each contrast's bootstrap and test)")
    echo(
        render_report(
            df,
            contrasts=contrasts,
            by=groups,
            fmt=fmt,
            width=width or terminal_width(),
            headline=headline,
            planned=grid.plans(dirs),
            factors=factors,
            imported=imported,
            details=details,
        ).rstrip("\n")
    )


@app.command()
def plot(
    dirs: Dirs,
    out: Annotated[Path, typer.Option("--out", help="folder for the PNG and PDF figures")] = Path("figures"),
) -> None:
    """Seven figures, PNG and PDF: success_by_condition, success_vs_budget, tokens_per_success,
    repair_funnel, failure_codes, repair_dynamics, factor_effects (docs/reports.md)."""
    # pandas, pydantic (results): not for --help
    from harness.progress import steps  # rich: not for --help
    from harness.rundir.targets import check_folder
    from results import load
    from results.plots import FIGURES, FORMATS, save_figures  # matplotlib only when plotting
    from results.rundir import run_dirs

    runs = run_dirs(dirs)
    check_folder(out, runs, "--out", (f"{name}.{fmt}" for name in FIGURES for fmt in FORMATS))
    say = steps("plot")
    say(f"reading the records of {len(runs)} run folder{'s' * (len(runs) != 1)}")
    df = load(runs)
    with storage_guard(out):  # a full disk is one line; save_figures leaves no partial figure
        written = save_figures(df, out, progress=say)
    for p in written:
        echo(str(p))


@app.command()
def export(
    dirs: Dirs,
    parquet: Annotated[
        Path | None,
        typer.Option("--parquet", help="write the episode frame (one row per episode) as this .parquet file"),
    ] = None,
    inspect_dir: Annotated[
        Path | None,
        typer.Option(
            "--inspect",
            help="write inspect_ai logs (one .eval per suite, "
            "model, condition and budget) into this "
            "folder, for `inspect view` (extra [inspect])",
        ),
    ] = None,
) -> None:
    """Write the runs as Parquet (one row per episode) and/or as inspect_ai logs for `inspect view`."""
    if parquet is None and inspect_dir is None:
        raise UserError("export needs a format: --parquet FILE and/or --inspect FOLDER")
    # pydantic (results.rundir): not for --help
    from harness.rundir.targets import check_file, check_folder
    from results.rundir import run_dirs

    runs = run_dirs(dirs)
    # before anything is read: an export that replaced what it reads would destroy the run
    if parquet is not None:
        check_file(parquet, runs, "--parquet")
    if inspect_dir is not None:
        check_folder(inspect_dir, runs, "--inspect")
    if parquet is not None:
        # pandas: not for --help
        from results import load, to_parquet

        df = load(runs)
        with storage_guard(parquet):  # a folder above it that is a file, a name too long: one line
            parquet.parent.mkdir(parents=True, exist_ok=True)
        with written_whole(parquet) as part:
            to_parquet(df, part)
        echo(f"{len(df)} episodes -> {parquet}")
    if inspect_dir is not None:
        # out/err: rich consoles made on use (common.__getattr__): not for --help
        from harness.cli.common import err

        # pandas (results.load): not for --help
        from harness.readers.inspect_log import export as to_inspect

        done = to_inspect(runs, inspect_dir)
        for run in done.runs:
            if run.partial:
                err.print(
                    f"[yellow]warning:[/yellow] {run.path} is still being written (or was cut short); "
                    "exported as it stands",
                    highlight=False,
                )
        echo(
            f"{len(done.files)} inspect logs, {done.samples} samples from {done.records} records -> {inspect_dir}"
            f"  (inspect view --log-dir {inspect_dir})"
        )
