"""The run's progress bar and its estimate of the time left.

Every count on the bar means one thing: done/total, solved and tokens count every episode (the
reference agents' too); the time left counts the models' episodes only (a reference agent takes
no time), estimated from the models' episodes done so far, and says so ("models' ETA").
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from harness.agents.base import PREFIX as AGENT_PREFIX
from harness.printable import console
from harness.types import EpisodeRecord

# episodes played before the run says how long the rest will take
ESTIMATE_AFTER = 3


def steps(command: str) -> Callable[[str], None]:
    """A command's steps that take seconds (`report`, `plot`), each said on stderr as it starts, to a
    person at a terminal; stdout is the result. No command, or stderr not a terminal (a log, a
    pipe, a test): nothing said, so that an error stays the one line it is."""
    err = Console(stderr=True, highlight=False)
    if not command or not err.is_terminal:
        return lambda step: None
    return lambda step: err.print(f"{command}: {step}…", markup=False)


def _minutes(seconds: float) -> str:
    return (
        f"{seconds:.0f} s"
        if seconds < 90
        else f"{seconds / 60:.0f} min"
        if seconds < 5400
        else f"{seconds / 3600:.1f} h"
    )


def _progress(console: Console) -> Progress:
    """The bar. Its refresh thread redraws only on a terminal (4 times a second): elsewhere (a log,
    CI, a benchmark) the bar is drawn once, at the end, and the thread only took the GIL from the
    event loop (3-6% of the calls per second at C=32, L=50 ms; benchmarks/throughput.py)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("solved {task.fields[solved]}"),
        TextColumn("tokens {task.fields[tokens]}"),
        TimeElapsedColumn(),
        TextColumn("{task.fields[eta]}"),
        console=console,
        transient=False,
        auto_refresh=console.is_terminal,
        refresh_per_second=4,
    )


class Counter:
    """Counts each record as the writer appends it, into the run's summary and the bar; after the
    models' first ESTIMATE_AFTER episodes, says how long the rest will take (reference agents
    finish at once: the estimate counts the models' episodes only)."""

    def __init__(self, summary: Any, model_episodes: list[Any]):
        self.summary, self.left_total = summary, len(model_episodes)
        self.timed = 0  # the models' episodes finished so far
        self.progress: Progress | None = None
        self.bar: Any = None
        self.started = time.monotonic()

    def attach(self, progress: Progress, total: int) -> None:
        self.progress = progress
        eta = f"ETA after {ESTIMATE_AFTER} model episodes" if self.left_total else ""
        self.bar = progress.add_task("episodes", total=total, solved="0", tokens="0", eta=eta)
        self.started = time.monotonic()

    def count(self, saved: asyncio.Future[EpisodeRecord]) -> None:
        if saved.cancelled() or saved.exception() is not None:
            return  # the worker that awaits it raises
        record, summary = saved.result(), self.summary
        summary.done += 1
        summary.solved += bool(record.success)
        summary.tokens += (record.prompt_tokens or 0) + (record.completion_tokens or 0)
        summary.harness_errors += bool(record.harness_error)
        if self.progress is None:
            return
        self.progress.update(self.bar, advance=1, solved=str(summary.solved), tokens=f"{summary.tokens:,}")
        if record.model.startswith(AGENT_PREFIX):
            return
        self.timed += 1
        left = self.left_total - self.timed
        if self.timed < ESTIMATE_AFTER:
            return
        rate = (time.monotonic() - self.started) / self.timed
        # rich's own ETA column counts the agents' episodes too: the models' time left is ours
        self.progress.update(self.bar, eta=f"models' ETA {_minutes(rate * left)}" if left else "")
        if self.timed == ESTIMATE_AFTER and left:
            self.progress.console.print(
                f"estimate: about {_minutes(rate * left)} for the models' {left} episode{'s' * (left != 1)} left, "
                f"at the pace of their first {ESTIMATE_AFTER} (a later task's longer prompt takes longer: the "
                "bar's ETA follows each episode)",
                highlight=False,
            )


PROGRESS_EVERY_S = 10.0


class SimulationProgress:
    """What `--simulate` is doing, on stderr: an estimate once the first study of a size is timed, then
    a line every PROGRESS_EVERY_S seconds (plain lines: a log file reads them as a terminal does)."""

    def __init__(self) -> None:
        self.started = self.said = 0.0

    def __call__(self, what: str, units: int, done: int, studies: int) -> None:
        now = time.monotonic()
        if done == 0:
            self.started = self.said = now
            return
        per = (now - self.started) / done
        if done == 1:
            line = f"simulating {studies:,} studies of {units:,} for {what}: about {per * studies:,.0f} s"
        elif now - self.said >= PROGRESS_EVERY_S:
            line = f"  {done:,} of {studies:,} studies for {what}: about {per * (studies - done):,.0f} s left"
        else:
            return
        console(stderr=True).print(f"{line} ({per * 1000:,.0f} ms a study)", highlight=False)
        self.said = now
