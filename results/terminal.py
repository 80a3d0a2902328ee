"""A frame as a rich table that fits the terminal: columns drop whole, never cut or squeezed.

A report read at 80 columns must still show every condition name and its rate with the CI, so
those columns are kept and never wrap; the other columns are dropped, least useful first, until
the table fits, and the caller says which were left out. A wider terminal shows more of them.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

import pandas as pd
from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def _table(frame: pd.DataFrame, fold: Sequence[str]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for col in frame.columns:
        longest = max((len(str(v)) for v in frame[col]), default=0)
        # a header longer than its values goes on as many lines as it takes, never wider than its longest word
        words = max(len(w) for w in str(col).split() or [""])
        header = "\n".join(textwrap.wrap(str(col), width=max(longest, words, 1))) if col else ""
        if col in fold:
            table.add_column(header, overflow="fold", ratio=1, min_width=min(16, max(longest, 8)))
        else:  # min_width: rich would otherwise squeeze a no_wrap column and cut its values with "…"
            table.add_column(header, no_wrap=True, min_width=max(longest, *(len(w) for w in header.split("\n"))))
    for row in frame.itertuples(index=False):
        table.add_row(*(Text(str(v)) for v in row))
    return table


def fit(
    console: Console, frame: pd.DataFrame, keep: Sequence[str], drop_order: Sequence[str], fold: Sequence[str] = ()
) -> tuple[Table, list[str]]:
    """The table of `frame` at the console's width, and the columns left out to get there.

    keep: never dropped. drop_order: dropped first to last while the table is too wide; columns in
    neither list go last, right to left. fold: free-text columns that may wrap instead of dropping.
    """
    order = [c for c in drop_order if c in frame.columns]
    order += [c for c in reversed(frame.columns) if c not in keep and c not in order and c not in fold]
    dropped: list[str] = []
    while True:
        shown = frame.drop(columns=dropped)
        table = _table(shown, fold)
        # measured unclamped: console.measure would cap the answer at the console's width
        needed = Measurement.get(console, console.options.update_width(1_000_000), table).minimum
        if needed <= console.width or len(dropped) == len(order):
            return table, dropped
        dropped.append(order[len(dropped)])
