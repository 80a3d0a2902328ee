"""A frame as a rich table that fits the terminal: columns drop whole, never cut or squeezed.

A report read at 80 columns must still show every condition name and its rate with the CI, so
those columns are kept and never wrap; the other columns are dropped, least useful first, until
the table fits, and the caller says which were left out. A wider terminal shows more of them.
Where even the kept columns are too wide (several suites side by side, a narrow terminal), they
drop too, last first, rather than let rich crop a value: only the first column always stays.
Headers wrap between words; a free-text column wraps between words, never inside one.
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
            # never narrower than its longest word: rich would fold that word, cutting it in two
            word = max((len(w) for v in frame[col] for w in str(v).split()), default=0)
            table.add_column(header, overflow="fold", ratio=1, min_width=max(min(16, max(longest, 8)), word, words))
        else:  # min_width: rich would otherwise squeeze a no_wrap column and cut its values with "…"
            table.add_column(header, no_wrap=True, min_width=max(longest, *(len(w) for w in header.split("\n"))))
    for row in frame.itertuples(index=False):
        table.add_row(*(Text(str(v)) for v in row))
    return table


def fit(
    console: Console, frame: pd.DataFrame, keep: Sequence[str], drop_order: Sequence[str], fold: Sequence[str] = ()
) -> tuple[Table, list[str]]:
    """The table of `frame` at the console's width, and the columns left out to get there.

    drop_order: dropped first to last while the table is too wide; columns in no list go next,
    right to left. fold: free-text columns that may wrap between words instead of dropping; they go
    after those. keep: dropped only when all the others are gone and the table is still too wide,
    last to first; the frame's first column is never dropped (it names the row).
    """
    order = [c for c in drop_order if c in frame.columns]
    order += [c for c in reversed(frame.columns) if c not in keep and c not in order and c not in fold]
    order += [c for c in fold if c in frame.columns and c not in order]
    order += [c for c in reversed(keep) if c in frame.columns and c not in order and c != frame.columns[0]]
    dropped: list[str] = []
    while True:
        shown = frame.drop(columns=dropped)
        table = _table(shown, fold)
        # measured unclamped: console.measure would cap the answer at the console's width
        needed = Measurement.get(console, console.options.update_width(1_000_000), table).minimum
        if needed <= console.width or len(dropped) == len(order):
            return table, dropped
        dropped.append(order[len(dropped)])
