"""A condition's feedback as the message family writes it (one message), for tests that read it."""

from __future__ import annotations

from conditions import resolve
from envs.contract import Violation


def said(condition: str, violation: Violation, cut: int | None = None) -> str:
    """What the loop sends after `violation` under `condition` in a suite of the message family."""
    return "\n".join(resolve(condition, "message", cut=cut).items(violation))
