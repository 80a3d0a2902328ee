"""The one base class of every error caused by what the user typed or pointed us at, and the
one message for an unknown name.

The CLI's single guard turns any `UserError` into one line on stderr and exit code 2; anything
else is a bug or an infrastructure failure and keeps its traceback. Dependency-free, at the bottom
of the imports (`envs` is what every package may import), so each package raises these.
"""

from __future__ import annotations


class UserError(ValueError):
    """Bad input: an unknown name, a malformed spec, a run directory that cannot be used."""


class UnknownName(UserError):
    """An unknown registry name; the message names the bad value and the allowed ones."""

    def __init__(self, kind: str, value: str, allowed: list[str], listing: str | None = None):
        """`listing`: the allowed names as the message shows them, where a plain sorted list
        would hide their structure (the model kinds under their headings)."""
        self.kind, self.value, self.allowed = kind, value, sorted(allowed)
        super().__init__(f"unknown {kind} {value!r}; allowed: {listing or ', '.join(self.allowed) or '(none)'}")
