"""Python numbers from pandas cells and group keys, for the type checker.

pandas-stubs type a group key as `Hashable` and a cell read with `.at` as any scalar (dates, NA,
intervals...): only the column's dtype, unknown to the checker, says it holds counts.
"""

from __future__ import annotations

from typing import SupportsInt, cast


def as_int(value: object) -> int:
    """`int(value)` of a key or cell of an integer (or integral float) column; fails as int() does."""
    return int(cast(SupportsInt, value))
