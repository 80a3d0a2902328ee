"""The episode frame as a Parquet file (pyarrow), for analysis outside this package."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from results.errors import RecordsError, UsageError

_SCALARS = (str, bool, int, float)


def _needs_json(values: pd.Series) -> bool:
    """Parquet columns need one type; nested or mixed values travel as JSON text instead."""
    kinds = set()
    for v in values.dropna():
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            kinds.add("list[str]")
        elif isinstance(v, _SCALARS):
            kinds.add("number" if isinstance(v, (int, float)) and not isinstance(v, bool) else type(v).__name__)
        else:
            return True
    return len(kinds) > 1


def _to_json(v: object) -> str | None:
    if v is None or (isinstance(v, float) and v != v):
        return None
    return json.dumps(v, sort_keys=True, default=str)


def parquet_frame(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for col in out.columns:
        if out[col].dtype == object and _needs_json(out[col]):
            out[col] = out[col].map(_to_json)
    return out


def to_parquet(df: pd.DataFrame, path: str | Path) -> Path:
    """Write the frame; nested columns (calls, config, ...) become JSON strings."""
    try:
        import pyarrow  # noqa: F401  (a dependency; an install that lacks it gets one line, not a traceback)
    except ImportError:
        raise UsageError("export --parquet needs pyarrow, which this install lacks: pip install pyarrow") from None
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    frame = parquet_frame(df)
    frame.attrs = {}
    too_large = [c for c in frame.columns if frame[c].dtype == object and frame[c].map(_beyond_int64).any()]
    if too_large:  # a hand edit (10**30): Parquet holds no such integer, and pandas would raise deep inside
        raise RecordsError(
            f"column {too_large[0]} holds an integer beyond 64 bits, which Parquet cannot store; "
            "the records were edited: repair them"
        )
    frame.to_parquet(path, engine="pyarrow", index=False)
    return path


def _beyond_int64(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and not -(2**63) <= v < 2**63
