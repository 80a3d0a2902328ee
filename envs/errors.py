"""The one base class of every error caused by what the user typed or pointed us at, and the
one message for an unknown name.

The CLI's single guard turns any `UserError` into one line on stderr and exit code 2; anything
else is a bug or an infrastructure failure and keeps its traceback. Dependency-free, at the bottom
of the imports (`envs` is what every package may import), so each package raises these.
"""

from __future__ import annotations

import traceback

from envs.tracebacks import portable_path


class UserError(ValueError):
    """Bad input: an unknown name, a malformed spec, a run directory that cannot be used."""


class UnknownName(UserError):
    """An unknown registry name; the message names the bad value and the allowed ones."""

    def __init__(self, kind: str, value: str, allowed: list[str], listing: str | None = None):
        """`listing`: the allowed names as the message shows them, where a plain sorted list
        would hide their structure (the model kinds under their headings)."""
        self.kind, self.value, self.allowed = kind, value, sorted(allowed)
        super().__init__(f"unknown {kind} {value!r}; allowed: {listing or ', '.join(self.allowed) or '(none)'}")


class SuiteBug(RuntimeError):
    """An exception a suite's own code raised where it should have answered: a validator's
    ValueError or assertion (a rule rejects a call with `envs.validation.fail`), a backend's
    KeyError, a success check's TypeError. The episode is a harness error naming the suite's file
    and line, never the agent's failure."""

    def __init__(self, what: str, exc: BaseException, at: str | None = None):
        # `at`: where the suite's code is, for a fault no frame of it raised (an answer of a wrong type)
        super().__init__(f"a bug in the suite: {what} raised {type(exc).__name__}: {exc} ({at or where(exc)})")

    def __reduce__(self) -> tuple[object, tuple[str]]:
        # sent back whole from the process a bounded check ran in (envs.limits): its message, as built
        return (_suite_bug, (str(self),))


def _suite_bug(message: str) -> SuiteBug:
    bug = SuiteBug.__new__(SuiteBug)
    RuntimeError.__init__(bug, message)
    return bug


def where(exc: BaseException) -> str:
    """The file and line an exception was raised at (the innermost frame), as a portable path."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ is not None else []
    return f"{portable_path(frames[-1].filename)}:{frames[-1].lineno}" if frames else "no traceback"
