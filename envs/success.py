"""A tool suite's success check (envs.authoring), as the harness asks it: a bool, or the suite's bug.

A plugin's check is code the harness runs but did not write: it runs under the limit on external
code (envs.limits), so that one which never returns is a harness error naming it, not a hang.
"""

from __future__ import annotations

from typing import Any

from envs.errors import SuiteBug
from envs.limits import bounded
from envs.tracebacks import portable_path


def checked(suite: Any, state: Any, draft: Any) -> bool:
    """The suite's success check; an exception there, or an answer that is no bool, is the suite's
    bug, never a lost episode: `'False'`, `[False]` or a dict are true to `bool()`, and a wrong answer
    would be scored solved. A plugin's check (code outside this project's `envs`) runs in a process
    of its own, under the limit on external code: one that never returns is a harness error too."""
    if getattr(suite.success, "__module__", "").partition(".")[0] == "envs":
        return _verdict(suite, state, draft)
    what = f"the success check of suite {suite.name!r} ({_defined_at(suite.success)})"
    return bounded(_verdict, suite, state, draft, what=what)


def _verdict(suite: Any, state: Any, draft: Any) -> bool:
    try:
        said = suite.success(state, draft)
    except Exception as exc:
        raise SuiteBug("the success check", exc) from exc
    if isinstance(said, bool) or type(said).__name__ == "bool_":  # numpy's bool is a bool too
        return bool(said)
    wrong = TypeError(f"it returned {said!r:.80} (a {type(said).__name__}), not a bool")
    raise SuiteBug(f"the success check of suite {suite.name!r}", wrong, _defined_at(suite.success))


def _defined_at(fn: Any) -> str:
    """The file and line a function is defined at (a plugin's file), as SuiteBug names a frame."""
    code = getattr(fn, "__code__", None)
    return f"{portable_path(code.co_filename)}:{code.co_firstlineno}" if code is not None else repr(fn)
