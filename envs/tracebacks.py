"""Tracebacks as the `traceback` condition shows them: the text of `traceback.format_exception`,
cached per code position chain (Python 3.11's carets make it costly), with file names relative to
where code lives, so the same call gives the same text in every checkout."""

from __future__ import annotations

import os
import sysconfig
import traceback as _tb
from pathlib import Path
from typing import Any


def format_exception(exc: BaseException) -> str:
    """`"".join(traceback.format_exception(exc))`, the same text, for a fraction of the cost.

    Python 3.11+ parses each frame's source line to place its carets: most of the cost of a
    violation. The frames' lines depend on the code positions alone (code object, line,
    instruction), so they are formatted once per position chain and the exception's own lines
    every time. An exception with a cause or context (two tracebacks), or a group (its members
    nested), is formatted in full."""
    if (
        exc.__cause__ is not None
        or (exc.__context__ is not None and not exc.__suppress_context__)
        or isinstance(exc, BaseExceptionGroup)
    ):
        return "".join(_portable(_tb.TracebackException(type(exc), exc, exc.__traceback__)).format())
    return _frames_text(exc.__traceback__) + _exception_line(exc)


def _roots() -> tuple[str, ...]:
    """Where code lives on this machine: the checkout and the Python's library folders, longest first."""
    paths = {str(Path(__file__).resolve().parents[1])}
    paths.update(p for key in ("purelib", "platlib", "stdlib", "platstdlib") if (p := sysconfig.get_paths().get(key)))
    return tuple(sorted((p.rstrip(os.sep) + os.sep for p in paths), key=len, reverse=True))


CODE_ROOTS = _roots()


def portable_path(filename: str) -> str:
    """A frame's file relative to where code lives (`envs/validation.py`, `pydantic/main.py`): a
    traceback the agent is shown names no folder of this machine, so the same call gives the same
    text in every checkout."""
    return next((filename[len(root) :] for root in CODE_ROOTS if filename.startswith(root)), filename)


def _portable(te: _tb.TracebackException) -> _tb.TracebackException:
    """The frames of `te`, and of its causes, contexts and group members, with portable file names
    (their source lines are read before, when the TracebackException is made)."""
    pending, seen = [te], set()
    while pending:
        at = pending.pop()
        if id(at) in seen:
            continue
        seen.add(id(at))
        for frame in at.stack:
            frame.filename = portable_path(frame.filename)
        pending += [x for x in (at.__cause__, at.__context__, *(getattr(at, "exceptions", None) or [])) if x]
    return te


def _exception_line(exc: BaseException) -> str:
    """`format_exception_only`'s text; its common case (no notes, not a SyntaxError)
    written directly: the module-qualified type, then `str(exc)`."""
    if isinstance(exc, SyntaxError) or hasattr(exc, "__notes__"):
        return "".join(_tb.format_exception_only(type(exc), exc))
    cls = type(exc)
    name = cls.__qualname__ if cls.__module__ in ("__main__", "builtins") else f"{cls.__module__}.{cls.__qualname__}"
    try:
        text = str(exc)
    except Exception:
        return "".join(_tb.format_exception_only(type(exc), exc))
    return f"{name}: {text}\n" if text else f"{name}\n"


_FRAMES: dict[tuple[Any, ...], str] = {}


def _frames_text(tb: Any) -> str:
    if tb is None:
        return ""
    positions = []
    at = tb
    while at is not None:
        positions.append((at.tb_frame.f_code, at.tb_lineno, at.tb_lasti))
        at = at.tb_next
    key = tuple(positions)
    text = _FRAMES.get(key)
    if text is None:
        # TracebackException's stack carries the column positions the carets need
        stack = _portable(_tb.TracebackException(BaseException, BaseException(), tb)).stack
        text = "Traceback (most recent call last):\n" + "".join(stack.format())
        if len(_FRAMES) < 4096:  # the chains a run meets are few: its tools' validation paths
            _FRAMES[key] = text
    return text
