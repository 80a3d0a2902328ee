"""results.row_groups groups as pandas does: the same groups, keys (their scalar types and a
missing value included) and order as groupby(sort=False, dropna=False), and one integer a row that
is equal exactly where the rows' values are."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from results.row_groups import row_groups, row_keys


def _frame(seed: int, n: int = 500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    model = pd.Series(rng.choice(["m1", "m2", "m3"], n), dtype="str")
    model[rng.random(n) < 0.05] = None  # a missing value is a group of its own (dropna=False)
    flag = pd.Series(rng.choice(np.array([True, False, None], dtype=object), n), dtype=object)
    return pd.DataFrame(
        {
            "model": model,
            "task": pd.Series([f"t{i}" for i in rng.integers(0, 40, n)], dtype="str"),
            "budget": rng.integers(1, 4, n),
            "flag": flag,
            "temperature": rng.choice([0.0, 0.7, math.nan], n),
        }
    )


def _same(a: object, b: object) -> bool:
    return type(a) is type(b) and (a == b or (a != a and b != b))


@pytest.mark.parametrize("cols", [["model"], ["model", "budget"], ["budget", "flag"], ["task", "temperature", "model"]])
@pytest.mark.parametrize("seed", [0, 1])
def test_the_groups_are_pandas_groups(cols, seed):
    df = _frame(seed)
    rows = (np.random.default_rng(seed + 9).random(len(df)) < 0.7) if seed else None
    picked = df if rows is None else df[rows]
    theirs = [(k, g.index.to_numpy()) for k, g in picked.groupby(cols, sort=False, dropna=False)]
    ours = list(row_groups(df, cols, rows))
    assert len(ours) == len(theirs) > 1
    for (key, at), (their_key, their_at) in zip(ours, theirs, strict=True):
        assert all(_same(a, b) for a, b in zip(key, their_key, strict=True)), (key, their_key)
        assert at.tolist() == their_at.tolist()


def test_one_integer_a_row_equal_where_the_values_are():
    df = _frame(3, 2000)
    cols = ["model", "task", "budget", "flag"]
    keys = row_keys(df, cols)
    text = np.array(["|".join(map(repr, row)) for row in zip(*(df[c].tolist() for c in cols), strict=True)])
    assert 0 <= keys.min() and keys.max() < len(df)
    for value in np.unique(keys)[:200]:
        assert len(set(text[keys == value])) == 1
    assert len(np.unique(keys)) == len(set(text))


def test_no_rows_no_groups():
    assert list(row_groups(_frame(0), ["model"], np.zeros(500, dtype=bool))) == []
