"""One fork run of `repair-harness fork` (the spec of one group of sources), played in this process:
the command's, or, for an import replayed on another bfcl-eval release than the installed one, a
worker's on that release (harness.imports.worker; the command chooses), so that every fork point is
rebuilt, and every fork played, on the backends, data and texts its entries were replayed on
(run.json: `imported.bfcl_eval`).

A worker answers what the command would have ended with: its lines (passed on as they come), a fork
with no point (`nothing`: the command counts them over its groups) and an exit code (`exit`: a
failure the worker has already printed, as the command's guard prints it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from harness.cli.common import failure_said, redacted_console, run_spec
from harness.fork import NothingToFork
from harness.run_spec import RunSpec


def play(spec: RunSpec, flags: dict[str, bool], say: Callable[[str], None]) -> None:
    """The fork run in this process, on the bfcl-eval it imports. `flags`: check, import_check,
    dry_run, retry_errors, preflight. A run with no fork point raises NothingToFork."""
    # pydantic, the spec machinery, the episode loop: not for --help
    from harness.fork_checks import dry_run_text, import_check_text
    from harness.rundir.folder import refuse_links

    check, dry_run = flags["check"], flags["dry_run"]
    try:
        if flags["import_check"]:  # an import's player cannot play: its prefixes are checked
            say(import_check_text(spec))
            return
        if dry_run:
            # what the fork would refuse in its --out, the dry run refuses too (it opens nothing)
            refuse_links(Path(spec.out))
            say(dry_run_text(spec))
            return
        run_spec(spec, flags["retry_errors"], flags["preflight"])
    finally:
        if check and not dry_run and not flags["import_check"]:
            # only with --check
            from harness.readers.fork_check import reproduced

            found = reproduced(spec.out)  # None: the fork stopped before it recorded anything
            if found is not None:
                say(found)


def in_worker(request: dict[str, Any], say: Callable[[str], None], answer: Callable[..., None]) -> None:
    """A worker's fork run (harness.imports.worker): how it ended, answered to the command."""
    try:
        with redacted_console():  # no line the worker prints shows a key, as in the command's own guard
            play(RunSpec(**request["spec"]), request["flags"], say)
    except NothingToFork as exc:
        answer(nothing=str(exc))
    except typer.Exit as exc:
        answer(exit=exc.exit_code)
    except Exception as exc:
        code = failure_said(exc)
        if code is None:  # a bug: its traceback, on the stderr the worker shares
            raise
        answer(exit=code)


def on_release(spec: RunSpec, flags: dict[str, bool], say: Callable[[str], None]) -> None:
    """The fork run where its sources were replayed: here, or in a worker on their release."""
    from harness.imports import releases  # BFCL's releases: a fork of an import only
    from harness.imports.worker import spawn  # subprocess: only where a release is another

    release = spec.fork.release if spec.fork is not None else None
    if release is None or release == releases.installed():
        play(spec, flags, say)
        return
    request = {"do": "fork", "spec": spec.model_dump(mode="json"), "flags": flags}
    for answer in spawn(releases.folder(release), request, say):
        if "nothing" in answer:
            raise NothingToFork(str(answer["nothing"]))
        if answer.get("exit"):
            raise typer.Exit(int(answer["exit"]))
