"""The TextWorld suites' own failure, importable without the game generator (the CLI's guard names it)."""

from __future__ import annotations


class GameGenerationError(RuntimeError):
    """A game could not be generated; the message names the seed and parameters."""
