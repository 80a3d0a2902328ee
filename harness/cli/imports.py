"""`import`: another harness's published transcripts as records (harness.imports)."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.common import PLUGIN_HELP, echo, group
from harness.imports import IMPORTERS

app = group()


@app.command("import")
def import_(
    kind: str = typer.Argument(..., metavar="FORMAT", help="the transcripts' format: bfcl"),
    paths: list[Path] = typer.Argument(..., help="result files, or folders of them"),
    out_dir: Path = typer.Option(..., "--out", help="a folder: one run directory per model and suite goes in it"),
    model: str | None = typer.Option(None, "--model", help="the model's name  [default: each file's folder]"),
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP + "; an importer of another format"),
) -> None:
    """Import published transcripts: each recorded call played again on the suite's environment,
    judged by our contract and the suite's own checker, one record per entry; a rerun resumes."""
    # rich: not for --help
    from rich.console import Console

    # the episode loop, pydantic: not for --help
    from harness.imports.play import write

    # hashlib (3 ms): not for --help
    from harness.plugins import load

    load(plugin or [])
    importer = IMPORTERS.get(kind)
    console = Console(stderr=True)
    for item in importer.batches(list(paths), out_dir, model):
        if isinstance(item, str):
            echo(item)
            continue
        done = write(item, console)
        ends = ", ".join(f"{n} {end}" for end, n in sorted(done.ends.items()))
        already = f"; {done.already} already there" if done.already else ""
        echo(f"{done.out}: {done.records} records ({ends or 'none new'}){already}")
        if done.fidelity:
            echo("  replayed calls: " + ", ".join(f"{k} {v}" for k, v in sorted(done.fidelity.items())))
