"""`conditions` and `suites`: what can be run, laid out to read at 80 columns and use a wider terminal."""

from __future__ import annotations

import typer

from envs import describe_suites, get_suite, suite_entry
from harness.cli.common import group

app = group()


@app.command("conditions")
def list_conditions() -> None:
    """List the conditions: what the agent is told after a failed call."""
    from rich import box  # here, as in every command: help imports no rich
    from rich.markup import escape
    from rich.table import Column, Table

    from harness.cli.common import out

    table = Table(
        Column("name", no_wrap=True),
        Column("paper", no_wrap=True),
        Column("what the agent is told", ratio=1),
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        expand=False,
    )
    from conditions import CONDITIONS  # here: help and `suites` import no condition or pydantic model

    for _, c in CONDITIONS.items():
        # the arbiter is worth a word only where it is not the validator
        how = [c.shows.spelled()] + ([] if c.arbiter == "validator" else [f"arbiter {c.arbiter}"])
        table.add_row(
            c.name, c.paper_name or "", escape(c.description) + (f"\n[dim]({', '.join(how)})[/dim]" if how else "")
        )
    out.print(table, highlight=False)


@app.command("suites")
def list_suites(
    name: str | None = typer.Argument(None, help="a suite: show its --env options and its budget", show_default=False),
) -> None:
    """List the suites, or show one suite's --env options and the budget `run` uses."""
    from rich import box
    from rich.markup import escape
    from rich.table import Column, Table

    from harness.cli.common import out

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
        table.add_row(s["name"], str(s["default_budget"]), escape(s["description"]))
    out.print(table, highlight=False)
    out.print(
        "budget: model calls per episode that `run` uses unless --budget is given. "
        "`repair-harness suites NAME` shows a suite's --env options.",
        highlight=False,
    )
