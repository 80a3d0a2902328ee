"""`conditions` and `suites`: what can be run, laid out to read at 80 columns and use a wider terminal."""

from __future__ import annotations

import types
import typing
from typing import TYPE_CHECKING, Any

import typer

from envs import describe_suites, get_suite, suite_entry
from harness.cli.common import group

if TYPE_CHECKING:
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

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
    if name is not None:
        return _show_suite(name)
    from rich import box
    from rich.markup import escape
    from rich.table import Column, Table

    from harness.cli.common import out

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


def _show_suite(name: str) -> None:
    from rich import box
    from rich.markup import escape
    from rich.table import Column, Table

    from harness.cli.common import out

    entry = suite_entry(name)
    s = get_suite(name)
    out.print(f"[bold]{s.name}[/bold]: {entry.description}", highlight=False)
    out.print(
        f"budget: {entry.budget} model calls per episode (what `run` uses unless --budget is given)", highlight=False
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
    for row in option_rows(s.options_model):
        table.add_row(*(escape(v) for v in row))
    out.print(table, highlight=False)


def option_rows(model: type[BaseModel]) -> list[tuple[str, str, str, str]]:
    """(key, type, default, allowed) of each option of a suite's pydantic options model."""
    rows = []
    for attr, field in model.model_fields.items():
        kind, allowed = _kind(field.annotation)
        bounds = _bounds(field)
        rows.append((field.alias or attr, kind, _default(field), ", ".join(x for x in (allowed, bounds) if x)))
    return rows


def _kind(annotation: Any) -> tuple[str, str]:
    """A readable type and, for a Literal, its allowed values."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return "choice", " | ".join(str(a) for a in args)
    if origin in (typing.Union, types.UnionType):
        parts = [_kind(a) for a in args if a is not type(None)]
        kind = " or ".join(k for k, _ in parts) + (" or null" if type(None) in args else "")
        return kind, " | ".join(a for _, a in parts if a)
    if origin is not None:  # list[int] and the like
        return f"{getattr(origin, '__name__', origin)}[{', '.join(_kind(a)[0] for a in args)}]", ""
    return getattr(annotation, "__name__", str(annotation)), ""


def _bounds(field: FieldInfo) -> str:
    """ "1..100000" for a closed range, ">= 0" for a half-open one."""
    found = {
        key: getattr(m, key)
        for m in field.metadata
        for key in ("ge", "gt", "le", "lt")
        if getattr(m, key, None) is not None
    }
    if "ge" in found and "le" in found:
        return f"{found['ge']}..{found['le']}"
    marks = {"ge": ">=", "gt": ">", "le": "<=", "lt": "<"}
    return ", ".join(f"{marks[k]} {v}" for k, v in found.items())


def _default(field: FieldInfo) -> str:
    if field.is_required():
        return "(required)"
    value = field.get_default(call_default_factory=True)
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
