"""Per-cell statistics: solved/N with a Wilson interval, cost, validity, repair, failures.

A harness error (success is None) says nothing about the agent: it is counted in
`harness_errors` and left out of N and of every rate and cost below.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from results.columns import C
from results.errors import UnknownChoice
from results.heap import gives_back
from results.row_groups import row_groups

ALPHA = 0.05
# DESIGN.md's order: floor first, then the paper's four, then the other arms
CONDITION_ORDER = (
    "none",
    "traceback",
    "raw",
    "loc_obs",
    "allowed_prose",
    "allowed_json",
    "self_check",
    "self_check_wait",
    "fault_raw",
    "fault_problem",
)
# key columns that split cells automatically when a frame holds several of their values
AUTO_SPLIT = (C.suite, C.budget, C.constrain)


def wilson(solved: int, n: int, alpha: float = ALPHA) -> tuple[float, float]:
    """Wilson score interval; (nan, nan) for n = 0."""
    if n <= 0:
        return (math.nan, math.nan)
    lo, hi = proportion_confint(solved, n, alpha=alpha, method="wilson")
    # statsmodels' rounding can put the bound a hair past the rate (1.4e-17 above 0 at 0 of 18),
    # which a figure's whisker of negative length then refuses: the interval holds the rate
    rate = solved / n
    return min(float(lo), rate), max(float(hi), rate)


def condition_rank(name: str) -> tuple[int, str]:
    return (CONDITION_ORDER.index(name), "") if name in CONDITION_ORDER else (len(CONDITION_ORDER), name)


def valid_rows(df: pd.DataFrame) -> pd.DataFrame:
    return df[df[C.success].notna()]


def group_columns(df: pd.DataFrame, by: Sequence[str] | None = None) -> list[str]:
    """model first, then the asked `by` columns, then suite/budget if the frame mixes them."""
    cols = [C.model]
    for col in by or ():
        if col not in df.columns:
            # a frame loaded with some columns only names them all in attrs["fields"]
            known = df.attrs.get("fields", df.columns)
            raise UnknownChoice("--by column", col, [c for c in known if not c.startswith("_")])
        if col not in cols and col != C.condition:
            cols.append(col)
    for col in AUTO_SPLIT:
        if col not in cols and col in df.columns and df[col].nunique() > 1:
            cols.append(col)
    return cols


def _mean(rows: pd.DataFrame, col: str) -> float:
    if col not in rows.columns or rows.empty:
        return math.nan
    values = pd.to_numeric(rows[col], errors="coerce")
    return float(values.mean()) if values.notna().any() else math.nan


def _total(rows: pd.DataFrame, col: str) -> float:
    if col not in rows.columns or rows.empty:
        return math.nan
    values = pd.to_numeric(rows[col], errors="coerce")
    return float(values.sum()) if values.notna().any() else math.nan


def _rate(rows: pd.DataFrame, col: str) -> float:
    """Share of True among the rows that recorded the field (None = not applicable)."""
    if col not in rows.columns:
        return math.nan
    values = rows[col].dropna()
    return float(values.astype(bool).mean()) if len(values) else math.nan


CELL_COLUMNS = (
    C.success,
    C.sample_seed,
    C.model_calls,
    C.prompt_tokens,
    C.completion_tokens,
    C.usage_missing,
    C.prompt_words,
    C.first_call_valid,
    C.repaired,
    C.limit_hit,
    C.fenced_answers,
)


def cell(rows: pd.DataFrame) -> dict[str, float | int]:
    """All statistics of one cell (the rows of one condition x model x ...)."""
    ok = valid_rows(rows)
    n = len(ok)
    solved = int(ok[C.success].astype(bool).sum())
    lo, hi = wilson(solved, n)
    prompt, completion = _total(ok, C.prompt_tokens), _total(ok, C.completion_tokens)
    # an episode whose server sent no usage makes the cell's token cost unknown, never smaller
    unknown = _usage_unknown(ok)
    tokens = prompt + completion if not unknown else math.nan
    words = _total(ok, C.prompt_words)
    return {
        "episodes": len(rows),
        "sample_seeds": int(rows[C.sample_seed].nunique()),
        "harness_errors": len(rows) - n,
        "n": n,
        "solved": solved,
        "rate": solved / n if n else math.nan,
        "ci_low": lo,
        "ci_high": hi,
        "model_calls_mean": _mean(ok, C.model_calls),
        "model_calls_total": _total(ok, C.model_calls),
        "prompt_tokens_mean": _mean(ok, C.prompt_tokens),
        "completion_tokens_mean": _mean(ok, C.completion_tokens),
        "total_tokens_mean": tokens / n if n else math.nan,
        "total_tokens": tokens,
        "tokens_per_success": tokens / solved if solved else math.nan,
        "prompt_words_mean": _mean(ok, C.prompt_words),
        "words_per_success": words / solved if solved else math.nan,
        "first_call_valid_rate": _rate(ok, C.first_call_valid),
        C.repaired: int(ok[C.repaired].fillna(False).astype(bool).sum()) if C.repaired in ok else 0,
        "repaired_rate": _rate(ok, C.repaired),
        "limit_hit_rate": _rate(ok, C.limit_hit),
        C.fenced_answers: _total(ok, C.fenced_answers),
        "usage_unknown": unknown,
    }


def _usage_unknown(rows: pd.DataFrame) -> int:
    """Episodes with at least one call whose token usage the server did not report."""
    if rows.empty:
        return 0
    missing = pd.Series(False, index=rows.index)
    for col in (C.prompt_tokens, C.completion_tokens):
        if col in rows:
            missing |= pd.to_numeric(rows[col], errors="coerce").isna()
    if C.usage_missing in rows:
        missing |= pd.to_numeric(rows[C.usage_missing], errors="coerce").fillna(0) > 0
    return int(missing.sum())


def sort_cells(frame: pd.DataFrame, cols: list[str], then: Sequence[tuple[str, bool]] = ()) -> pd.DataFrame:
    """Groups in a stable order: by model etc., conditions in DESIGN order, then `then`."""
    if frame.empty:
        return frame
    keys = [c for c in cols if c != C.condition] + ["_cond"] + [c for c, _ in then]
    ascending = [True] * (len(keys) - len(then)) + [asc for _, asc in then]
    frame = frame.assign(_cond=frame[C.condition].map(condition_rank))
    return frame.sort_values(keys, ascending=ascending, kind="stable").drop(columns="_cond").reset_index(drop=True)


@gives_back
def summary(df: pd.DataFrame, by: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per condition x model (x `by` columns): see `cell` for the columns."""
    cols = [C.condition, *group_columns(df, by)]
    # the key columns grouped, then each group's rows of the columns `cell` reads taken: grouping
    # them all would take every column into sorted order at once
    read = [*dict.fromkeys([*cols, *(c for c in CELL_COLUMNS if c in df.columns)])]
    rows = [{**dict(zip(cols, keys, strict=True)), **cell(df[read].take(at))} for keys, at in row_groups(df, cols)]
    return sort_cells(pd.DataFrame(rows), cols)


@gives_back
def failure_taxonomy(df: pd.DataFrame, by: Sequence[str] | None = None) -> pd.DataFrame:
    """How the unsolved episodes ended: final failure code counts and shares per cell."""
    cols = [C.condition, *group_columns(df, by)]
    # the rows and columns read, taken once (not every column of every valid row, then the failed)
    valid = df[C.success].notna()
    unsolved = valid & ~df[C.success].where(valid, False).astype(bool)
    failed = df.loc[
        unsolved, [*dict.fromkeys([*cols, C.success, *([C.final_failure] if C.final_failure in df else [])])]
    ]
    if failed.empty:
        return pd.DataFrame(columns=[*cols, C.final_failure, "count", "share"])
    codes = failed.get(C.final_failure, pd.Series(index=failed.index, dtype=object))
    failed = failed.assign(**{C.final_failure: codes.fillna("unrecorded").astype(str)})
    counts = failed.groupby([*cols, C.final_failure], sort=False).size().rename("count").reset_index()
    counts["share"] = counts["count"] / counts.groupby(cols)["count"].transform("sum")
    return sort_cells(counts, cols, then=[("count", False), (C.final_failure, True)])


def funnel(df: pd.DataFrame, by: Sequence[str] | None = None) -> pd.DataFrame:
    """Episodes -> first call valid -> repaired (failed first, then succeeded) -> solved, as counts."""
    cols = [C.condition, *group_columns(df, by)]
    rows = []
    for keys, part in valid_rows(df).groupby(cols, sort=False):
        first = part[C.first_call_valid] if C.first_call_valid in part else pd.Series(dtype=object)
        rep = part[C.repaired] if C.repaired in part else pd.Series(dtype=object)
        rows.append(
            {
                **dict(zip(cols, keys, strict=True)),
                "n": len(part),
                C.first_call_valid: int(first.fillna(False).astype(bool).sum()),
                C.repaired: int(rep.fillna(False).astype(bool).sum()),
                "solved": int(part[C.success].astype(bool).sum()),
            }
        )
    # its columns even with no rows (a run of harness errors only): a figure says "no data", never a KeyError
    return sort_cells(pd.DataFrame(rows, columns=[*cols, "n", C.first_call_valid, C.repaired, "solved"]), cols)
