"""What every command module shares: the two consoles, the one failure guard, list flags, running a spec.

Help, listing and errors must start fast (benchmarks/startup.py), so this module and every command
module import only typer and dependency-light modules at the top: rich, pydantic, the spec
machinery, model backends and games are imported inside the commands that use them.
"""

from __future__ import annotations

import shutil
import signal
import sys
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from envs.errors import UserError
from envs.textworld.errors import GameGenerationError
from harness.errors import (
    PreflightFailed,
    ServerDied,
    ServerStartError,
    StartFailed,
    StorageError,
    SuiteCheckFailed,
    WorkerDied,
)
from harness.flags import parse_ints as parse_ints
from harness.flags import split_list as split_list
from harness.interrupts import terminate_as_interrupt
from harness.printable import printable
from harness.redact import redacted_console

if TYPE_CHECKING:
    from rich.console import Console


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (`out`) or stderr (`err`), made when a command prints: `--help`
    imports no rich. Made per command run, it reads the terminal's width (COLUMNS) of that run."""
    from harness.printable import console as printable_console  # rich: not for --help

    return printable_console(stderr=stderr)  # a name's control characters written out, never obeyed


def __getattr__(name: str) -> Any:
    """`out` and `err`: `from harness.cli.common import out` inside a command gives it its console."""
    if name in ("out", "err"):
        return console(stderr=name == "err")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# exit codes of `run` and the commands built on it (documented in docs/running.md, exit codes)
EXIT_BAD_INPUT = 2
EXIT_SERVER = 3  # the model server could not be reached at the start, or died during the run
EXIT_HARNESS_ERRORS = 4  # the run finished, but some episodes are recorded as harness errors
# keyed by int: a handler receives the signal's number (Signals is an IntEnum, so both keys hash alike)
EXIT_INTERRUPTED: dict[int, int] = {signal.SIGINT: 130, signal.SIGTERM: 143}

# How a command may fail without a traceback: the first word of its one line on stderr and its
# exit code. Anything else is a bug and keeps its traceback.
FAILURES: tuple[tuple[type[Exception], str, int], ...] = (
    (UserError, "error", EXIT_BAD_INPUT),  # bad input the user can fix: an unknown name, a bad spec, a missing extra
    (GameGenerationError, "generation failed", 1),
    (ServerDied, "error", EXIT_SERVER),  # a server we started died (a signal, an exit): what, why, the fix
    (ServerStartError, "error", 1),  # a model server that did not answer in time
    (StartFailed, "cannot start", EXIT_SERVER),  # no model server answered: nothing ran, rerun when it is up
    (PreflightFailed, "preflight failed", EXIT_SERVER),  # a served model's parser or template is broken
    (SuiteCheckFailed, "suite check failed", EXIT_SERVER),  # a task its own gold solution cannot win
    (StorageError, "stopped", 1),  # the disk filled up: the records written are whole, rerun to resume
    (WorkerDied, "stopped", 1),  # an import's worker was killed: what it wrote is kept, rerun to resume
)


def failure_said(exc: BaseException) -> int | None:
    """A failure of FAILURES said in its one line on stderr: its exit code (None: a bug, unsaid).
    The command's guard says it, and a worker that plays a command's part on another release."""
    found = next(((label, code) for kind, label, code in FAILURES if isinstance(exc, kind)), None)
    if found is None:
        return None
    from rich.markup import escape  # rich: not for --help

    # escaped: messages hold brackets, e.g. repair-harness[vllm]
    console(stderr=True).print(
        f"[red]{found[0]}:[/red] {escape(str(exc))}", highlight=False, emoji=False, soft_wrap=True
    )
    return found[1]


class GuardedGroup(TyperGroup):
    """A command group whose commands all run under the one guard (see FAILURES)."""

    def invoke(self, ctx: Any) -> Any:
        with redacted_console():  # no line a command prints shows a key a server echoed
            return self._guarded(ctx)

    def _guarded(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except tuple(kind for kind, _, _ in FAILURES) as exc:
            code = failure_said(exc)
            assert code is not None  # one of FAILURES
            raise typer.Exit(code) from None

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands, each with its whole first sentence, wrapped (click would cut it to one line, "...")."""
        rows = [
            (name, cmd.get_short_help_str(limit=sys.maxsize))
            for name in self.list_commands(ctx)
            if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden
        ]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


# Help is click's plain text (rich_markup_mode=None): typer's rich help imports rich and its
# markdown machinery, 0.1 to 0.2 s of every `--help`. Help texts are therefore plain: no markup.
HELP_WIDTH = 120  # help uses the terminal's width up to this many columns
PLUGIN_HELP = (
    "a Python file that registers suites, conditions or agents (docs/plugins.md); repeatable. "
    "Installed packages of the entry-point group repair_harness.plugins load by themselves"
)


def group(name: str | None = None, help: str | None = None) -> typer.Typer:
    """The Typer of one command module. `harness.cli` mounts it: with a name as a sub-command group,
    without one its commands sit at the top level."""
    return typer.Typer(
        name=name,
        help=help,
        cls=GuardedGroup,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        context_settings={"max_content_width": HELP_WIDTH},
    )


def echo(text: str) -> None:
    """Plain text on stdout as given (reports, CSV, JSON): no markup, wrapping or tab expansion; only
    control characters are written out (a folder named with an ESC sequence would recolour the terminal)."""
    sys.stdout.write(printable(text) + "\n")
    sys.stdout.flush()


def run_spec(
    spec: Any,
    retry_errors: bool = False,
    preflight: bool = False,
    suite_check: bool = True,
    plugin_changed: bool = False,
) -> None:
    """Play a spec's grid, with progress and a summary on stderr. Exit codes: 3 when the server
    stopped the run, 4 when episodes are recorded as harness errors, 130/143 on SIGINT/SIGTERM."""
    from rich.markup import escape  # rich: not for --help

    from harness.runner import play, start_line  # the runner, pydantic (results.rundir): not for --help
    from results import rundir  # the runner, pydantic (results.rundir): not for --help

    err = console(stderr=True)
    err.print(start_line(spec), highlight=False)
    try:
        with terminate_as_interrupt() as received:
            how = {"retry_errors": retry_errors, "preflight": preflight, "suite_check": suite_check}
            summary = play(spec, err, **how, plugin_changed=plugin_changed)
    except KeyboardInterrupt:
        signum = received[0] if received else signal.SIGINT
        err.print(
            f"\n[yellow]interrupted[/yellow] ({signal.Signals(signum).name}): {rundir.recorded_lines(spec.out)} "
            f"episodes are recorded in {spec.out}. Rerun the same command to resume; recorded episodes are skipped."
        )
        raise typer.Exit(EXIT_INTERRUPTED[signum]) from None
    kept = summary.errors_on_record
    err.print(summary.line())
    if summary.stopped:  # escaped: a dead server's report quotes its log, whose brackets are no markup
        err.print(
            f"[red]stopped:[/red] {escape(summary.stopped)}\nRerun the same command with --retry-errors to resume.",
            highlight=False,
            soft_wrap=True,
        )
        raise typer.Exit(EXIT_SERVER)
    if errors := summary.harness_errors + kept:
        err.print(
            f"[yellow]{errors} episodes are recorded as harness errors[/yellow] (infrastructure failures, "
            "never scored). Rerun the same command with --retry-errors to play them again."
        )
        raise typer.Exit(EXIT_HARNESS_ERRORS)


# the report's width where stdout is no terminal (a file, a pipe, `less`): what a terminal shows
# by default, so a report saved to a file reads the same when printed back in one
PIPE_WIDTH = 80


def terminal_width() -> int:
    """COLUMNS when set, else the terminal's columns, else PIPE_WIDTH (stdout is a file or a pipe)."""
    return shutil.get_terminal_size((PIPE_WIDTH, 24)).columns


def print_report(dirs: list[Any], lane: str | None = None) -> None:
    """One report over the run directories (their suites side by side), at the terminal's width;
    with a `reproduce paper` lane, also the artifact's own statistics of that lane."""
    from results import artifact_stats, grid, load, render_report  # pandas, scipy (results): not for --help

    df = load(dirs)
    echo(render_report(df, fmt="table", width=terminal_width(), planned=grid.plans(dirs)).rstrip("\n"))
    if lane is not None:
        echo(artifact_stats.render_text(artifact_stats.analyse(df, lane)).rstrip("\n"))
