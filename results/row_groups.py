"""Rows grouped by some columns' values, held as integers: a million rows grouped or paired by a
few text columns through pandas' own grouping copies and sorts those columns at every use (the
dynamics: +170 MB before their first cell; a contrast's arms merged on seven columns: 300 MB)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pandas as pd

from results.heap import gives_back


@gives_back
def row_keys(df: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    """Each row's values of `cols` as one integer, equal where all are equal (a missing value
    equal to a missing one, as groupby's dropna=False and merge have it). Each column's values
    numbered, then the pair of numbers so far numbered again: the integer stays below the row
    count and never overflows."""
    key = np.zeros(len(df), dtype=np.int64)
    for name in cols:
        codes, values = pd.factorize(df[name], use_na_sentinel=False)
        key = pd.factorize(key * len(values) + codes)[0]
    return key


def row_groups(
    df: pd.DataFrame, cols: Sequence[str], rows: np.ndarray | None = None
) -> Iterator[tuple[tuple[Any, ...], np.ndarray]]:
    """What `df[rows].groupby(cols, sort=False, dropna=False)` iterates over, the same keys in the
    same order, each group as its rows' positions (ascending) rather than a copy of its rows.
    `rows`: a boolean mask of the rows grouped (all by default)."""
    at = np.arange(len(df)) if rows is None else np.flatnonzero(rows)
    codes = pd.factorize(row_keys(df, cols)[at])[0]  # numbered in the order groups first appear
    if not len(codes):
        return
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes))
    parts = np.split(at[order], ends[:-1])
    # each group's key as pandas gives it (its scalar types, a missing value as NaN): one row a group
    firsts = df[list(cols)].take([part[0] for part in parts])
    keys = [key for key, _ in firsts.groupby(list(cols), sort=False, dropna=False)]
    yield from zip(keys, parts, strict=True)
