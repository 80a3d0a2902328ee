"""The limits on external code (envs.limits): their settings, read from the environment
($REPAIR_HARNESS_COMPUTE_LIMIT_S, $REPAIR_HARNESS_COMPUTE_MEMORY_MIB), and the errors that name
them when a computation passes one."""

from __future__ import annotations

import math
import os
from collections.abc import Callable

from envs.errors import UserError

LIMIT_ENV = "REPAIR_HARNESS_COMPUTE_LIMIT_S"
# a backend call or a success check is microseconds to milliseconds of work: ten seconds is a
# computation with no end (or one far too large), on a loaded machine too
DEFAULT_LIMIT_S = 10.0
# the sidecar's own alarm (`signal.alarm`, a C int of seconds) is the limit rounded up, plus 2
MAX_LIMIT_S = float(2**31 - 1 - 3)
MEMORY_ENV = "REPAIR_HARNESS_COMPUTE_MEMORY_MIB"
# how far a computation's address space may grow past the process it was forked from: a backend
# call or a check needs megabytes; a model's `square_root(precision=10**10)` asks for gigabytes
DEFAULT_MEMORY_MIB = 1024
MIN_MEMORY_MIB, MAX_MEMORY_MIB = 16, 2**30


class ComputeLimit(RuntimeError):
    """External code passed a limit (time or memory): its process was killed, and the limit, never
    the suite or the agent, is what the harness error names."""


class TimeLimit(ComputeLimit):
    """External code did not return within the limit: its process was killed."""

    def __init__(self, what: str, seconds: float):
        super().__init__(
            f"{what} did not return within {seconds:g} s and was stopped (the limit on external code, "
            f"{LIMIT_ENV}): a harness error, not the agent's failure"
        )


class MemoryLimit(ComputeLimit):
    """External code asked for more memory than the limit: its allocation failed, its process was ended."""

    def __init__(self, what: str, mib: int):
        super().__init__(
            f"{what} needed more than {mib:,} MiB of memory and was stopped (the limit on external code's "
            f"memory, {MEMORY_ENV}): a harness error, not the agent's failure"
        )


def _setting(name: str, default: float, read: Callable[[str], float], ok: Callable[[float], bool], takes: str) -> float:
    """A limit from the environment variable `name` (`default` when unset), refused in one line where
    `read` cannot read it or `ok` says it is out of range."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = read(raw)
    except ValueError:
        value = math.nan
    if not ok(value):
        raise UserError(f"{name} takes {takes}, got {raw!r}")
    return value


def limit_s() -> float:
    """The limit in seconds: $REPAIR_HARNESS_COMPUTE_LIMIT_S, else DEFAULT_LIMIT_S."""
    return _setting(
        LIMIT_ENV,
        DEFAULT_LIMIT_S,
        float,
        lambda v: 0 < v <= MAX_LIMIT_S,
        f"a number of seconds > 0 and at most {MAX_LIMIT_S:,.0f} (what the OS timer takes)",
    )


def memory_mib() -> int:
    """The memory limit in MiB: $REPAIR_HARNESS_COMPUTE_MEMORY_MIB, else DEFAULT_MEMORY_MIB."""
    return int(
        _setting(
            MEMORY_ENV,
            DEFAULT_MEMORY_MIB,
            int,
            lambda v: MIN_MEMORY_MIB <= v <= MAX_MEMORY_MIB,
            f"a whole number of MiB from {MIN_MEMORY_MIB} to {MAX_MEMORY_MIB:,}",
        )
    )
