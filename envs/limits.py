"""External code that a call or a check runs, under a time limit and a memory limit: BFCL's
backends and checker, a plugin's success check.

Their arguments are a model's (`power(base=9, exponent=999999999)`) or their code a plugin's (a
check that loops forever), and some computations never yield: a big-int `pow` runs in C holding the
GIL, so neither a thread nor a signal handler stops it. `bounded` runs the computation in a child
forked for it, which reads the parent's state as it is (copied on write: nothing is sent) and
answers with its pickled result or exception; past the limit the child is killed and `TimeLimit`
names what ran. The child's address space may grow by `memory_mib()` past what it was forked with
(RLIMIT_AS): `square_root(number=2, precision=10**10)` would take 4.6 GiB; past the bound its
allocation fails, and the MemoryError (however the code wrapped it) comes back as `MemoryLimit`.
The child leads a process group of its own, which ends with it: a check that forked a child of its
own leaves none behind. The episode records each as a harness error, never as the agent's failure.

A child's changes to the state die with it: a computation that must change the parent's state (a
backend's call) is run first in a child, for its time alone, then here once it returned in time.

Cost: a fork is 0.4 ms in a bare interpreter, 3-7 ms once pandas is loaded (650 mappings; measured
on a 2-core VM), too much per call for an import of thousands of calls. So an episode's calls go to
a `Sidecar`: a child forked once, at the episode's start, holding a copy of its state, that runs
each computation before this process does, in the same order, so its copy stays the episode's
state; a call costs a pipe's round trip. A sidecar whose episode closed in good order is kept for
the next episode, which has its copy of the state built there from the episode's data (`build`):
a fork per worker, not per episode (an import of 200 published entries: 7.6 cpu s before, 3.0
after). One stopped at a limit is never kept. `bounded` (a fork each) is for the rare one-off (a
plugin's success check). Without `os.fork` (Windows) everything runs in place, with no limit.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import pickle
import resource
import select
import signal
import sys
import time
import weakref
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

from envs import sidecar_pool
from envs.limit_settings import (
    LIMIT_ENV,
    MAX_LIMIT_S,
    MEMORY_ENV,
    ComputeLimit,
    MemoryLimit,
    TimeLimit,
    limit_s,
    memory_mib,
)

# the settings and errors are named here too: callers import the limits from one module
__all__ = [
    "LIMIT_ENV",
    "MAX_LIMIT_S",
    "MEMORY_ENV",
    "ComputeLimit",
    "MemoryLimit",
    "TimeLimit",
    "limit_s",
    "memory_mib",
    "bounded",
    "Sidecar",
]

T = TypeVar("T")


# children that answered and are exiting: reaped at the next call (waiting costs ~1 ms each)
_exiting: list[int] = []
# the pipe ends of live sidecars: a child forked later closes its copies, or a sidecar would never
# see its parent close them (its end of input)
_sidecar_fds: set[int] = set()


def bounded(fn: Callable[..., T], *args: Any, what: str) -> T:
    """`fn(*args)` computed in a child process, its result or exception returned or raised here;
    `TimeLimit` naming `what` when it takes longer than `limit_s()`."""
    seconds, mib = limit_s(), memory_mib()
    if not hasattr(os, "fork"):
        return fn(*args)
    _reap()
    _flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        _child(write, seconds, mib, what, fn, args)
    os.close(write)
    with contextlib.suppress(OSError):  # the child does it too: whichever runs first
        os.setpgid(pid, pid)
    data: bytes | None = None
    status = 0
    try:
        # one framed answer, not the pipe's end: a process the check forked may hold the pipe open
        data = _frame(read, time.monotonic() + seconds)
    finally:
        os.close(read)
        if data:  # answered: the child exits now; whatever it started ends with it
            with contextlib.suppress(ChildProcessError):
                os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        _end_group(pid)  # before the reaping: an unreaped leader keeps its group's number from reuse
        _, status = os.waitpid(pid, 0)
    if data is None:
        raise TimeLimit(what, seconds)
    if not data:
        raise RuntimeError(f"{what} ended its process without an answer ({_status(status)})")
    kind, value = pickle.loads(data)
    if kind == "memory":
        raise MemoryLimit(what, mib)
    if kind == "raised":
        raise value
    return value  # type: ignore[no-any-return]


def _end_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _child(write: int, seconds: float, mib: int, what: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> NoReturn:
    """The forked child: compute, answer, exit; never returns into the parent's code (its finally
    blocks and exit handlers are the parent's)."""
    try:
        _as_child(seconds, mib)
        blob = _answer(what, fn, args)
        _write(write, len(blob).to_bytes(8, "big") + blob)
        _flush()
    finally:
        os._exit(0)


class Sidecar:
    """A child forked now, with a copy of this process's state (`host` among it), that runs each
    computation asked of it on that copy, under the limit: `ask(fn, *args)` is `fn(host, *args)`
    there (`fn` a module-level function: it is sent by name). Once it passed the limit it is killed,
    and any later question is an error: the episode it served ends.

    `build=(fn, args)`, where `fn(*args)` makes a host equal to `host` from data: the sidecar is
    kept when its episode closes in good order, and the next episode's takes it and has its host
    built there, where a fork (3-7 ms, and the copy-on-write faults it leaves this process) was
    each episode's cost (issue 67). `fork=False`: everything runs in place (a host that is only
    read here)."""

    def __init__(self, host: Any, build: tuple[Callable[..., Any], tuple[Any, ...]] | None = None, fork: bool = True):
        self.host, self.pid, self.gone, self.build = host, 0, "", build
        if not fork or not hasattr(os, "fork"):
            return
        self.mib = memory_mib()
        kept = sidecar_pool.take(self.mib) if build else None
        reused = kept is not None
        if kept is None:
            _reap()
            _flush()
            to_child, requests = os.pipe()
            answers, from_child = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(requests)
                os.close(answers)
                _serve(host, to_child, from_child, self.mib)
            os.close(to_child)
            os.close(from_child)
            with contextlib.suppress(OSError):
                os.setpgid(pid, pid)
            _sidecar_fds.update((requests, answers))
            kept = (pid, requests, answers)
        self.pid, self._requests, self._answers = kept
        # closed with its episode's backends, or when they are collected: the child ends at its input's end
        self._closer = weakref.finalize(self, _shut, *kept)
        if reused and build:  # its host is the last episode's: this episode's is built there
            self.ask(_install, *build, what=f"building {type(host).__name__} for an episode")

    def close(self) -> None:
        if not self.pid:
            return
        if self.build and not self.gone and self._closer.detach():
            sidecar_pool.keep(self.mib, (self.pid, self._requests, self._answers))
            self.gone = "was closed with its episode"
            return
        self._closer()

    def ask(self, fn: Callable[..., T], *args: Any, what: str) -> T:
        if not self.pid:  # no fork here: in place
            return fn(self.host, *args)
        if self.gone:
            raise RuntimeError(f"{what} was not run: the process that runs the episode's external code {self.gone}")
        seconds = limit_s()
        blob = pickle.dumps((fn, args, seconds, what))
        try:
            _write(self._requests, len(blob).to_bytes(8, "big") + blob)
            data = _frame(self._answers, time.monotonic() + seconds)
        except BrokenPipeError:
            data = b""
        kind = pickle.loads(data)[0] if data else None
        if data and kind != "memory":
            kind, value = pickle.loads(data)
            if kind == "raised":
                raise value
            return value  # type: ignore[no-any-return]
        # past a limit (its copy of the state may be half-changed) or dead: it serves no more
        if data is None or kind == "memory":
            _end_group(self.pid)
        self._closer.detach()
        _, status = os.waitpid(self.pid, 0)
        for fd in (self._requests, self._answers):
            _sidecar_fds.discard(fd)
            os.close(fd)
        if data is None:
            self.gone = f"was stopped at the limit ({what})"
            raise TimeLimit(what, seconds)
        if kind == "memory":
            self.gone = f"was stopped at the memory limit ({what})"
            raise MemoryLimit(what, self.mib)
        self.gone = f"ended without an answer ({_status(status)})"
        raise RuntimeError(f"{what}: the process running it {self.gone}")


def _install(box: list[Any], build: Callable[..., Any], args: tuple[Any, ...]) -> None:
    """In a kept sidecar: the next episode's host, built from its data."""
    box[0] = build(*args)


def _forget_kept() -> None:
    """In a child forked from here: the kept sidecars are this process's parent's (its copies of
    their pipes closed, or they would never see their input's end)."""
    for fd in sidecar_pool.forget():
        _sidecar_fds.discard(fd)
        with contextlib.suppress(OSError):
            os.close(fd)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_kept)


def _end_sidecars() -> None:
    """At this process's exit: each kept sidecar's input closed and every sidecar waited for, so that
    none outlives it and their CPU is counted as its children's (os.wait4, `time`); one still busy a
    second later (an ask interrupted mid-computation) is ended. Forked children exit by os._exit: never here."""
    for pid, requests, answers in sidecar_pool.drain():
        _shut(pid, requests, answers)
    deadline = time.monotonic() + 1.0
    while _exiting and time.monotonic() < deadline:
        _reap()
        if _exiting:
            time.sleep(0.002)
    for pid in _exiting:
        _end_group(pid)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
    _exiting.clear()


atexit.register(_end_sidecars)


def _shut(pid: int, requests: int, answers: int) -> None:
    for fd in (requests, answers):
        _sidecar_fds.discard(fd)
        with contextlib.suppress(OSError):
            os.close(fd)
    _exiting.append(pid)


def _serve(host: Any, requests: int, answers: int, mib: int) -> NoReturn:
    """The sidecar: each request answered in order, until its parent closes the pipe; `_install`
    replaces the host (a kept sidecar's next episode)."""
    try:
        _as_child(None, mib)
        box = [host]
        with os.fdopen(requests, "rb") as rin, os.fdopen(answers, "wb") as wout:
            while len(head := rin.read(8)) == 8:
                fn, args, seconds, what = pickle.loads(rin.read(int.from_bytes(head, "big")))
                signal.alarm(math.ceil(seconds) + 2)
                blob = _answer(what, fn, (box if fn is _install else box[0], *args))
                signal.alarm(0)
                wout.write(len(blob).to_bytes(8, "big") + blob)
                wout.flush()
    finally:
        os._exit(0)


def _write(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _frame(fd: int, deadline: float) -> bytes | None:
    """One length-prefixed answer; None at the deadline, b"" at the pipe's end before it came."""
    got = b""
    while len(got) < 8 or len(got) < 8 + int.from_bytes(got[:8], "big"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b""
        got += chunk
    return got[8:]


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):  # the child's own prints only: never the parent's buffered text twice
        with contextlib.suppress(Exception):
            stream.flush()


def _as_child(seconds: float | None, mib: int) -> None:
    """A forked child's setup: the parent's interrupts are the parent's; no other sidecar's pipes;
    a process group of its own (ended with it); an address space that may grow by `mib` MiB."""
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    _bound_memory(mib)
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    for fd in _sidecar_fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    _sidecar_fds.clear()
    # the kernel ends a child whose parent is gone (killed -9) and so no longer waits for it
    signal.signal(signal.SIGALRM, signal.SIG_DFL)
    if seconds is not None:
        signal.alarm(math.ceil(seconds) + 2)


def _bound_memory(mib: int) -> None:
    """RLIMIT_AS at the address space the child was forked with plus `mib` MiB (never above a hard
    limit already set): the parent's own mappings (pandas, a model's libraries) are no allowance of it."""
    try:
        with open("/proc/self/statm", "rb") as f:
            now = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):  # no /proc (macOS): RLIMIT_AS counts from nothing there
        now = 0
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    bound = now + (mib << 20)
    if hard != resource.RLIM_INFINITY:
        bound = min(bound, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (bound, hard))


def _short_of_memory(exc: BaseException) -> bool:
    """A MemoryError, or an exception that a MemoryError caused (a suite's `SuiteBug` wraps it)."""
    seen: set[int] = set()
    at: BaseException | None = exc
    while at is not None and id(at) not in seen:
        if isinstance(at, MemoryError):
            return True
        seen.add(id(at))
        at = at.__cause__ or at.__context__
    return False


def _answer(what: str, fn: Callable[..., Any], args: tuple[Any, ...]) -> bytes:
    """`fn(*args)`'s result or exception, pickled; what cannot come back whole comes back as text;
    memory the limit refused comes back as `("memory", None)`."""
    answer: tuple[str, Any]
    try:
        answer = ("returned", fn(*args))
    except Exception as exc:
        answer = ("memory", None) if _short_of_memory(exc) else ("raised", exc)
    except BaseException as exc:  # a SystemExit in external code ends no run: an error of it
        answer = ("raised", RuntimeError(f"{what} raised {type(exc).__name__}: {exc}"))
    try:
        blob = pickle.dumps(answer)
        pickle.loads(blob)
    except Exception as exc:
        said = f"{type(answer[1]).__name__}: {answer[1]}" if answer[0] == "raised" else f"a {type(answer[1])}"
        blob = pickle.dumps(("raised", RuntimeError(f"{what}: {said} (not sent back: {exc})")))
    return blob


def _reap() -> None:
    for pid in list(_exiting):
        with contextlib.suppress(ChildProcessError):
            if os.waitpid(pid, os.WNOHANG)[0] == 0:
                continue
        _exiting.remove(pid)


def _status(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"killed by signal {os.WTERMSIG(status)}"
    return f"exit status {os.waitstatus_to_exitcode(status)}"
