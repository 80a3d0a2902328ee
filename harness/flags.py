"""What a flag's text means where it is a list: comma-separated names, integer lists and ranges.

Below the command line (harness/cli/ holds commands and their printing only), and light: help and
listing import it, so it imports nothing but the user-error base and the defaults.
"""

from __future__ import annotations

from envs.errors import UserError
from harness import defaults


def split_list(value: str | None) -> list[str] | None:
    """A comma-separated flag as a list; None when the flag was not given."""
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


def parse_ints(value: str | None) -> list[int] | None:
    """ "3101,3102" or "3101..3103" (inclusive)."""
    if value is None:
        return None
    ints: list[int] = []
    for part in split_list(value) or []:
        try:
            lo, hi = map(int, part.split("..")) if ".." in part else (int(part), int(part))
        except ValueError:
            raise UserError(f"not an integer list: {value!r} (use 1,2,3 or 1..3)") from None
        if hi - lo >= defaults.MAX_EPISODES:  # counted before a list of them is made: 0..10**12 ran out of memory
            raise UserError(
                f"the grid has {hi - lo + 1:,} episodes or more ({part}), more than one run plays "
                f"({defaults.MAX_EPISODES:,}): split it into several runs"
            )
        ints.extend(range(lo, hi + 1))
    return ints
