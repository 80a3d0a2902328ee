"""The two kinds of bad input analysis can meet; the CLI turns both into exit code 2."""

from __future__ import annotations

from envs.errors import UnknownName, UserError


class RecordsError(UserError):
    """Records that cannot be analysed as they are: missing, empty, malformed or mixed."""


class UsageError(UserError):
    """A request the records cannot answer: an unknown format, column or condition."""


class UnknownChoice(UnknownName, UsageError):
    """An unknown format, figure format or --by column: a UsageError, worded as every unknown name is."""
