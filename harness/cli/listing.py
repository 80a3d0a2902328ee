"""`conditions` and `suites`: what can be run, laid out to read at 80 columns and use a wider terminal."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from envs import describe_suites, get_suite, suite_entry
from envs.errors import UserError
from harness.cli.common import PLUGIN_HELP, echo, group

app = group()


def _plugins(files: list[Path] | None) -> None:
    from harness.plugins import load  # hashlib (3 ms): not for --help

    load(files or [])


@app.command("conditions")
def list_conditions(
    fmt: str = typer.Option("table", "--format", help="table | json (each alias's composition)"),
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP),
) -> None:
    """List the conditions, and the parts and forms any other one is composed of (PART+PART@FORM)."""
    # rich: not for --help
    from rich import box
    from rich.markup import escape
    from rich.table import Column, Table

    # here: help and `suites` import no condition or pydantic model
    from conditions import listing

    # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.cli.common import out

    if fmt not in ("table", "json"):
        raise UserError(f"unknown format {fmt!r}; allowed: table, json")
    _plugins(plugin)
    found = listing()
    if fmt == "json":
        return echo(json.dumps(found, indent=2))
    table = Table(
        Column("name", no_wrap=True),
        Column("paper", no_wrap=True),
        Column("what the agent is told", ratio=1),
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        expand=False,
    )
    for c in found["conditions"]:
        # the arbiter is worth a word only where it is not the validator; a plugin's, its source
        how = [c["composition"]] + ([] if c["arbiter"] == "validator" else [f"arbiter {c['arbiter']}"])
        how += [] if c["source"] == "built-in" else [c["source"]]
        table.add_row(c["name"], c["paper_name"] or "", escape(c["description"]) + f"\n[dim]({', '.join(how)})[/dim]")
    out.print(table, highlight=False)
    out.print(
        "Any other condition is a composition, PART+PART+...@FORM, e.g. retry+location+allowed@json", highlight=False
    )
    for kind in ("parts", "forms"):
        rows = Table(Column(kind, no_wrap=True), Column("shows", ratio=1), box=box.SIMPLE_HEAD, pad_edge=False)
        for row in found[kind]:
            rows.add_row(row["name"], escape(row["shows"]))
        out.print(rows, highlight=False)


@app.command("suites")
def list_suites(
    name: str | None = typer.Argument(None, help="a suite: show its --env options and its budget", show_default=False),
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP),
    verify: bool = typer.Option(
        False, "--verify", help="with NAME: agent:gold plays each task; one it cannot win is named (exit 3)"
    ),
) -> None:
    """List the suites, or show one suite's --env options and the budget `run` uses."""
    # rich: not for --help
    from rich import box
    from rich.markup import escape
    from rich.table import Column, Table

    # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.cli.common import out

    _plugins(plugin)
    if verify:
        # the episode loop, pydantic: only with --verify
        from harness.suite_check import verify_text

        if name is None:
            raise UserError("--verify checks one suite: repair-harness suites NAME --verify")
        out.print(verify_text(name, [str(p) for p in plugin or []]), highlight=False)
        return
    if name is not None:
        from envs.options import option_rows  # the suite's pydantic options model: only for `suites NAME`

        entry = suite_entry(name)
        suite = get_suite(name)
        out.print(f"[bold]{suite.name}[/bold]: {entry.description}", highlight=False)
        out.print(
            f"budget: {entry.budget} model calls per episode (what `run` uses unless --budget is given)",
            highlight=False,
        )
        table = Table(
            Column("--env KEY", no_wrap=True),
            Column("type", no_wrap=True),
            Column("default", overflow="fold"),
            Column("allowed", ratio=1),
            box=box.SIMPLE_HEAD,
            pad_edge=False,
            title="options (--env KEY=VALUE)",
            title_justify="left",
        )
        for row in option_rows(suite.options_model):
            table.add_row(*(escape(v) for v in row))
        out.print(table, highlight=False)
        return
    table = Table(
        Column("name", no_wrap=True),
        Column("budget", justify="right", no_wrap=True),
        Column("description", ratio=1),
        box=box.SIMPLE_HEAD,
        pad_edge=False,
    )
    for s in describe_suites():
        source = "" if s["source"] == "built-in" else f" [dim]({escape(s['source'])})[/dim]"
        table.add_row(s["name"], str(s["default_budget"]), escape(s["description"]) + source)
    out.print(table, highlight=False)
    out.print(
        "budget: model calls per episode that `run` uses unless --budget is given. "
        "`repair-harness suites NAME` shows a suite's --env options.",
        highlight=False,
    )
