"""The `repair-harness` command line.

Each module here holds one command group: a Typer made by `common.group`, its commands declared
with `@app.command()`. This table mounts them all, in the order `--help` lists them; every command
runs under the one guard of `common.GuardedGroup`.
"""

from __future__ import annotations

from harness.cli import analysis, demo, games, listing, reproduce, run, serve, show
from harness.cli.common import group

app = group(help="Measure how LLM agents repair a failed tool call.")

for module in (run, listing, analysis, show, demo, games, serve, reproduce):
    app.add_typer(module.app)
