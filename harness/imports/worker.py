"""`python -m harness.imports.worker`: an import, or a fork of one, played on a cached bfcl-eval
release, in a process of its own, so that two releases never meet in one interpreter (their modules
share names, and BFCL's checker keeps instances in its module's globals).

The parent (`spawn`) sends one JSON request on stdin: the release's folder, what to do (`import`
the files into a folder, `probe` samples of them for `--bfcl-version auto`, or `fork`: one fork
run of an import, harness.fork_play) and its arguments. The worker puts the folder first on
sys.path before anything imports bfcl_eval, checks that the package it then imports is that
folder's, and answers on stdout one JSON object a line: `say` (a line for the user, passed on as it
comes), `error` (bad input: the one line the parent raises as a UserError), and what the request
returns (`probe`: a sample's counts; a fork's end). A bug keeps its traceback on stderr, which the
worker shares with the parent, as it shares the terminal's interrupt (Ctrl-C reaches both: the
parent waits for the worker's own end); a SIGTERM the parent gets is passed on to the worker.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from envs.errors import UserError
from harness.errors import WorkerDied

# the folder that holds the harness package this process runs: the worker imports the same code
# (on PYTHONPATH, and `-P` keeps the working folder, which may hold another checkout, off sys.path)
_ROOT = str(Path(__file__).resolve().parents[2])


def spawn(release: Path, request: dict[str, Any], say: Callable[[str], None]) -> list[dict[str, Any]]:
    """Run a request in a worker on `release`; its lines are said as they come, the rest returned."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH")) if p)}
    answers: list[dict[str, Any]] = []
    error = None
    with (
        subprocess.Popen(
            [sys.executable, "-P", "-m", "harness.imports.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        ) as proc,
        _passed_on(proc),
    ):
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(json.dumps({**request, "release": str(release)}))
        proc.stdin.close()
        for line in proc.stdout:
            try:
                answer = json.loads(line)
            except ValueError:
                answer = {"say": line.rstrip("\n")}  # a line something else printed: passed on
            if "say" in answer:
                say(str(answer["say"]))
            elif "error" in answer:
                error = str(answer["error"])
            else:
                answers.append(answer)
    if error is not None:
        raise UserError(error)
    if -proc.returncode in (signal.SIGINT, signal.SIGTERM):  # stopped, as the parent would have been
        sys.stderr.write(f"stopped: the worker on {release} by {signal.Signals(-proc.returncode).name}\n")
        raise SystemExit(128 - proc.returncode)
    if proc.returncode < 0:  # killed: no traceback of its own to point at
        raise WorkerDied(_death(release, request, -proc.returncode))
    if proc.returncode != 0:
        raise RuntimeError(f"the worker on {release} exited {proc.returncode} (its traceback is above)")
    return answers


@contextlib.contextmanager
def _passed_on(proc: subprocess.Popen[str]) -> Iterator[None]:
    """While the worker runs: the terminal's Ctrl-C, which reaches the worker too, leaves the
    parent reading its last lines (it records what it played and ends with its own code); a SIGTERM
    sent to the parent alone is sent on. Only the main thread sets handlers (else: unchanged)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {
        signal.SIGINT: signal.signal(signal.SIGINT, signal.SIG_IGN),
        signal.SIGTERM: signal.signal(signal.SIGTERM, lambda signum, _: proc.send_signal(signum)),
    }
    try:
        yield
    finally:
        for signum, handler in before.items():
            signal.signal(signum, handler)


def _death(release: Path, request: dict[str, Any], signum: int) -> str:
    """A killed worker in one line: its signal in words, and what of its work is kept."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    said = f"the worker playing on bfcl-eval {release.name} ({release}) was killed by {name}"
    if signum == signal.SIGKILL:
        said += " (a kill -9, or the system out of memory)"
    out = request.get("out") or (request.get("spec") or {}).get("out")  # an import's --out, a fork's run
    if request.get("do") in ("import", "fork"):
        return (
            f"{said}; every record it wrote is kept in {out}: run the same command again to play the rest "
            "(what is recorded is skipped)"
        )
    return f"{said}; its samples were temporary, nothing is kept: run the same command again"


def _answer(**fields: Any) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def main() -> int:
    request = json.loads(sys.stdin.read())
    release = Path(request["release"])
    sys.path.insert(0, str(release))  # before envs.bfcl imports bfcl_eval: the release, not the installed one
    # imported after the release is first on sys.path: the release's package
    import bfcl_eval

    if not Path(bfcl_eval.__file__).resolve().is_relative_to(release.resolve()):
        raise RuntimeError(f"bfcl_eval came from {bfcl_eval.__file__}, not from {release}")
    try:
        if request["do"] == "fork":
            # after the release is first on sys.path: the fork's environments import bfcl_eval
            from harness.fork_play import in_worker

            in_worker(request, _say, _answer)
            return 0
        # after it too: the importer imports envs.bfcl, which imports bfcl_eval
        from harness.imports import here

        if request["do"] == "import":
            here.play_here(request["files"], request["out"], request["model"], request["auto"], _say)
        else:
            for probe in here.probe_here(request["samples"], request["out"]):
                _answer(probe=probe)
    except UserError as exc:
        _answer(error=str(exc))
        return 2
    return 0


def _say(text: str) -> None:
    _answer(say=text)


if __name__ == "__main__":
    sys.exit(main())
