"""The forks' repairs table (results.fork_frames): a source player whose own rows agree under every
source condition is one row in the terminal; one whose rows differ keeps a row per condition."""

from __future__ import annotations

import pandas as pd

from results.fork_frames import _alike


def _row(condition: str, player: str, rate: str) -> dict[str, object]:
    return {"model": "agent:reader", "condition": condition, "player": player, "suite": "bank-disputes",
            "points": 2, "repaired next [95% CI]": rate}  # fmt: skip


def test_alike_source_rows_are_one_and_differing_ones_stay():
    rows = [{**_row("raw", "agent:reader", "25.0%"), "points": 32}]
    rows += [_row(f"source's own ({c})", "agent:random", "0.0%") for c in ("raw", "loc_obs", "allowed_json")]
    rows += [
        _row("source's own (raw)", "agent:reader", "0.0%"),
        _row("source's own (allowed_json)", "agent:reader", "100.0%"),
    ]
    got = _alike(pd.DataFrame(rows))
    assert list(got["condition"]) == [
        "raw", "source's own (all 3)", "source's own (raw)", "source's own (allowed_json)"
    ]  # fmt: skip
    assert list(got["player"]) == ["agent:reader", "agent:random", "agent:reader", "agent:reader"]
    assert got.loc[1, "points"] == "2 each" and got.loc[0, "points"] == 32
