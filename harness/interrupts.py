"""SIGTERM as Ctrl-C: a run or a server killed politely unwinds the way an interrupted one does.

Python ends on SIGTERM without unwinding; inside `terminate_as_interrupt` it raises
KeyboardInterrupt instead, so every `finally` and context manager on the way out runs (servers
stopped, records written).
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def terminate_as_interrupt() -> Iterator[list[int]]:
    """Inside the block SIGTERM raises KeyboardInterrupt, as Ctrl-C does. Yields the list of the
    signals received."""
    received: list[int] = []

    def stop(signum: int, frame: Any) -> None:
        received.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield received
    finally:
        signal.signal(signal.SIGTERM, previous)
