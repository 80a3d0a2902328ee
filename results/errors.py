"""The two kinds of bad input analysis can meet; the CLI turns both into exit code 2."""

from __future__ import annotations

from common.errors import UserError


class RecordsError(UserError):
    """Records that cannot be analysed as they are: missing, empty, malformed or mixed."""


class UsageError(UserError):
    """A request the records cannot answer: an unknown format, column or condition."""


def unknown(kind: str, value: object, allowed: list[str]) -> UsageError:
    return UsageError(f"unknown {kind} {value!r}; allowed: {', '.join(sorted(allowed)) or '(none)'}")
