"""The `repair-harness` command line.

Each module here holds one command group: a Typer made by `common.group`, its commands declared
with `@app.command()`. This table mounts them all, in the order `--help` lists them; every command
runs under the one guard of `common.GuardedGroup`.
"""

from __future__ import annotations

import typer

from harness.cli import analysis, check, demo, doctor, fork, games, imports, listing, power, reproduce, run, serve, show
from harness.cli.common import echo, group

app = group(help="Measure how LLM agents repair a failed tool call.")


def _version(value: bool) -> None:
    if value:
        # importlib.metadata (harness.provenance): only for --version
        from harness.provenance import version_line

        echo(version_line())
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="print the version and exit"
    ),
) -> None:
    """Measure how LLM agents repair a failed tool call."""
    # a bad $REPAIR_HARNESS_COMPUTE_LIMIT_S or _MEMORY_MIB is one line before anything runs, not a harness error per
    # episode; envs.limits imports the standard library only
    from envs.limits import limit_s, memory_mib

    limit_s()
    memory_mib()


for module in (run, fork, imports, check, listing, analysis, power, show, demo, doctor, games, serve, reproduce):
    app.add_typer(module.app)
