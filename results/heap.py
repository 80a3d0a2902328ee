"""The report's memory between its stages: a million records' report frees hundreds of MB of
temporaries at each stage (the parser's blocks, an arm of a contrast, a cell of the dynamics),
which the C library's heap keeps for reuse; the next stage's arrays, of other sizes, grow the
heap beside them rather than reuse them, and the peak is every stage's leftovers at once
(issue 67: 1,105 MB, where the frame itself is 470 MB)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

import pyarrow as pa


def one_heap() -> None:
    """Arrow allocates from the C library's heap, as numpy and pandas do: with its own (mimalloc),
    what the parser and the frame's building free stays in Arrow's heap while the report's numpy
    arrays grow the other (a million records: 1.21 GB peak, 1.11 GB in one heap; issue 67)."""
    pa.set_memory_pool(pa.system_memory_pool())


def give_back() -> None:
    """The heap's free pages back to the system: under `one_heap` (the columnar reader's, a big
    report's) Arrow's pool is the C library's heap and this trims it (glibc's malloc_trim); under
    another pool, that pool's. A few ms: called once a stage or a cell, never once a row."""
    pa.default_memory_pool().release_unused()


F = TypeVar("F", bound=Callable[..., Any])


def gives_back(stage: F) -> F:
    """`stage`, then `give_back`: what it freed is not the next stage's to step over."""

    @functools.wraps(stage)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return stage(*args, **kwargs)
        finally:
            give_back()

    return cast(F, run)
