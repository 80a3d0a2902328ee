"""What a flag's text means where it is a list: comma-separated names, integer lists and ranges.

Below the command line (harness/cli/ holds commands and their printing only), and light: help and
listing import it, so it imports nothing but the user-error base.
"""

from __future__ import annotations

from envs.errors import UserError


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
            if ".." in part:
                lo, hi = part.split("..")
                ints.extend(range(int(lo), int(hi) + 1))
            else:
                ints.append(int(part))
        except ValueError:
            raise UserError(f"not an integer list: {value!r} (use 1,2,3 or 1..3)") from None
    return ints
