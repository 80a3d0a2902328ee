"""Text as the terminal shows it: control characters written out, never obeyed.

A folder's name, a task id, a model's answer or a server's error body may hold ESC sequences
(`\\x1b[31m`, `\\x1b]8;;...`, `\\x1b[2J`) or C1 controls: printed raw, they recolour, move the
cursor, clear the screen or retitle the terminal. Every line a command prints goes through one of
two sinks, and both escape them here: `harness.cli.common.echo` (reports, CSV, JSON) and the rich
consoles made by `console` (every `print` of a str, the guard's one error line included). The
progress bar's own cursor codes are rich's control segments, never a str it prints: untouched.

Dependency-light (`echo` serves `--version`): rich is imported only when a console is made.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

# C0 but tab and newline (the lines' own layout), DEL and C1 (0x9b alone is a CSI on some terminals)
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escaped(match: re.Match[str]) -> str:
    # \u00XX, not repr's \xXX: `report --format json` goes through `echo`, and a JSON string
    # reads \u001b back as the same character where \x1b is no escape JSON knows
    return f"\\u{ord(match.group()):04x}"


def printable(text: str) -> str:
    """`text` with every control character but tab and newline written as `\\u00XX`."""
    return _CONTROL.sub(_escaped, text) if _CONTROL.search(text) else text


@functools.cache
def _console_class() -> type[Console]:
    from rich.console import Console  # rich: not for --help

    class PrintableConsole(Console):
        """A rich console whose printed strings show their control characters (`printable`)."""

        def render_str(self, text: str, *args: Any, **kwargs: Any) -> Any:
            return super().render_str(printable(text), *args, **kwargs)

    return PrintableConsole


def console(**kwargs: Any) -> Console:
    """A rich `Console(**kwargs)` that prints control characters written out (`printable`)."""
    return _console_class()(**kwargs)
