"""The episode frame as a Parquet file (pyarrow), for analysis outside this package."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from results.errors import UsageError

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
    frame.to_parquet(path, engine="pyarrow", index=False)
    return path
