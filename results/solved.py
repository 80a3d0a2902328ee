"""Solved/N as one table: a row per suite and condition, a column per player (model or reference
agent). The demo's page shows it; `report` is the full account (CIs, contrasts, dynamics).

Harness errors are left out of N, as everywhere in the report; a cell a player never played reads
"—". A reference agent's column is headed by its short name (`gold` for `agent:gold`): the
caller says which players are agents.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass

import pandas as pd
from rich.console import Console

from results.columns import AGENT_PREFIX, KEY_FIELDS, C, is_reference_agent
from results.stats import condition_rank, valid_rows
from results.terminal import fit

SUITE, CONDITION = "suite", "condition"


@dataclass(frozen=True)
class Solved:
    """The table's frame (display strings), and per player what it solved of how many episodes."""

    frame: pd.DataFrame
    players: list[str]
    solved: dict[str, int]
    scored: dict[str, int]
    harness_errors: int


def label(player: str) -> str:
    return player.removeprefix(AGENT_PREFIX) if is_reference_agent(player) else player


def solved_grid(df: pd.DataFrame, players: Sequence[str] = ()) -> Solved:
    """The table of `df`; `players` orders the columns (those absent from it follow, sorted)."""
    present = list(dict.fromkeys(str(m) for m in df[C.model]))
    order = [p for p in players if p in present] + sorted(p for p in present if p not in players)
    # a suite played at several budgets gets a row per budget: their rates are not one cell's
    split = [C.budget] if df[C.budget].nunique() > 1 else []
    frame = df.assign(**{C.suite: df[C.suite].astype(str), C.condition: df[C.condition].astype(str)})
    ok = valid_rows(frame)
    keys_of = [C.suite, *split, C.condition]
    cells = ok.groupby([*keys_of, C.model], sort=False)[C.success].agg(["sum", "size"])
    played = set(frame.groupby([*keys_of, C.model], sort=False).size().index)
    keys = sorted({k[:-1] for k in played}, key=lambda k: (k[:-1], condition_rank(k[-1])))
    rows = []
    for i, key in enumerate(keys):
        row = dict(zip([SUITE, *split, CONDITION], key, strict=True))
        if i and keys[i - 1][0] == key[0]:
            row[SUITE] = ""  # the suite is named once, on its first row
        for p in order:
            if (*key, p) in cells.index:
                won, n = cells.loc[(*key, p)]
                row[label(p)] = f"{int(won)}/{int(n)}"
            else:  # never played here, or only harness errors (left out of N)
                row[label(p)] = "0/0" if (*key, p) in played else "—"
        rows.append(row)
    by_player = ok.groupby(C.model)[C.success]
    return Solved(
        frame=pd.DataFrame(rows, columns=[SUITE, *split, CONDITION, *(label(p) for p in order)]),
        players=order,
        solved={str(m): int(s.astype(bool).sum()) for m, s in by_player},
        scored={str(m): len(s) for m, s in by_player},
        harness_errors=_unrepaired_errors(frame, ok),
    )


def _unrepaired_errors(df: pd.DataFrame, ok: pd.DataFrame) -> int:
    """Episodes recorded only as harness errors: one that `--retry-errors` played again is scored."""
    keys = [k for k in KEY_FIELDS if k in df.columns]
    errors = df.loc[df[C.success].isna(), keys].astype(str).drop_duplicates()
    scored = set(map(tuple, ok[keys].astype(str).itertuples(index=False)))
    return sum(tuple(row) not in scored for row in errors.itertuples(index=False))


def render(solved: Solved, width: int = 80) -> list[str]:
    """The table at `width` columns: a player column that does not fit is left out, and named."""
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)
    frame = solved.frame
    keep = (SUITE, CONDITION, *(label(p) for p in solved.players[:1]))
    table, dropped = fit(console, frame, keep, ())
    console.print(table)
    if dropped:
        console.print(f"(left out at {width} columns: {', '.join(dropped)})", highlight=False, markup=False)
    return [line.rstrip() for line in out.getvalue().rstrip("\n").split("\n")]
