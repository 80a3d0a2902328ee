"""Pieces every command module shares: the bad-input guard, list flags, running a spec."""

from __future__ import annotations

import asyncio
import functools
from typing import Any, Callable

import typer
from rich.console import Console

from envs import UnknownName
from harness.spec import SpecError
from harness.store import RunDirError

err_console = Console(stderr=True)

BAD_INPUT: tuple[type[BaseException], ...] = (UnknownName, SpecError, RunDirError)


def bad_input_exits(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input is one clear message and exit code 2, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BAD_INPUT as exc:
            err_console.print(f"[red]error:[/red] {exc}", highlight=False, markup=True, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


def parse_ints(value: str | None) -> list[int] | None:
    """"3101,3102" or "3101..3103" (inclusive)."""
    if value is None:
        return None
    out_: list[int] = []
    for part in _split(value) or []:
        try:
            if ".." in part:
                lo, hi = part.split("..")
                out_.extend(range(int(lo), int(hi) + 1))
            else:
                out_.append(int(part))
        except ValueError:
            raise SpecError(f"not an integer list: {value!r} (use 1,2,3 or 1..3)") from None
    return out_


def run_spec(spec: Any, retry_errors: bool = False) -> None:
    from harness.runner import run as run_async

    err_console.print(f"run → {spec.out}  ({spec.suite}; models {', '.join(spec.models)}; conditions {', '.join(spec.conditions)})")
    summary = asyncio.run(run_async(spec, err_console, retry_errors=retry_errors))
    err_console.print(
        f"{summary.done} episodes played, {summary.skipped} already recorded, {summary.solved} solved, "
        f"{summary.harness_errors} harness errors, {summary.tokens:,} tokens"
    )
    if summary.stopped:
        err_console.print(f"[red]stopped:[/red] {summary.stopped}\nRerun the same command with --retry-errors to resume.")
        raise typer.Exit(3)
