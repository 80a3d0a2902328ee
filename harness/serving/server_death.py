"""What a dead model server is said to have died of: the signal in words, its log, the fix.

A server the harness started that dies (a signal, a non-zero exit) stops the run with one
message built here, at start-up and mid-run alike; never just "Connection error".
"""

from __future__ import annotations

import signal

# the words for a signal, per kind of server: what it most often means there
WORDS: dict[str, dict[int, str]] = {
    "any": {
        signal.SIGILL: "illegal instruction: the server runs CPU instructions this machine cannot run",
        signal.SIGKILL: "killed, often out of memory (the kernel's OOM killer; `dmesg` says)",
        signal.SIGSEGV: "segmentation fault: a crash in the server's native code",
        signal.SIGBUS: "bus error: a crash in native code, or a model file changed or truncated while mapped",
        signal.SIGABRT: "aborted: the server's native code stopped itself (its log says why)",
        signal.SIGFPE: "arithmetic fault in native code",
        signal.SIGTERM: "terminated by another process",
        signal.SIGINT: "interrupted",
        signal.SIGHUP: "hung up: its terminal or session went away",
    },
    "llama.cpp": {
        signal.SIGILL: "illegal instruction: this llama.cpp build uses CPU instructions this machine cannot run",
    },
}


def signal_words(signum: int, kind: str = "any") -> str:
    """ "SIGILL (illegal instruction: ...)": the signal's name and what it means for this kind of server."""
    try:
        name = signal.Signals(signum).name
    except ValueError:
        name = f"signal {signum}"
    words = WORDS.get(kind, {}).get(signum) or WORDS["any"].get(signum)
    return f"{name} ({words})" if words else name


def exit_words(returncode: int, kind: str = "any") -> str:
    """How a process ended, from its return code (negative: the signal that killed it)."""
    return f"killed by {signal_words(-returncode, kind)}" if returncode < 0 else f"exited with code {returncode}"


def report(
    label: str,
    *,
    returncode: int,
    kind: str,
    phase: str,
    log_path: object,
    tail: list[str],
    fix: str,
    pid: int | None = None,
    after_s: float | None = None,
) -> str:
    """The one message: what died, how and when, where its log is, its last lines, what to run."""
    when = f" after {after_s:.0f} s" if after_s is not None else ""
    head = f"the {label}{f' (pid {pid})' if pid else ''} died {phase}{when}: {exit_words(returncode, kind)}."
    lines = [head, f"its log: {log_path}" + ("; last lines:" if tail else " (empty)")]
    lines += [f"  | {line}" for line in tail]
    lines.append(f"fix: {fix}")
    return "\n".join(lines)
