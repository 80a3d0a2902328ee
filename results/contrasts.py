"""Paired contrasts between two conditions over the episodes both arms share.

Pairs match on (suite, task_id, model, budget, sample_seed). With one pair per task the
difference gets a paired bootstrap CI and an exact McNemar test; with several sample seeds
per task (a sampling lane) the task is the unit: a task-cluster bootstrap and a sign-flip
test on per-task mean differences. Holm's step-down runs over the contrasts asked for,
within each model (and `by` group). The model-call difference gets the same treatment, with a
sign-flip test in place of McNemar. Every resampling draws from its own seeded Generator; how
the draws are made (bounded memory at any size) is in `results.resampling`.

A contrast of fewer than MIN_CLUSTERS pairs has no interval (a bootstrap over two pairs has three
possible means and reads as certainty: the forks' rule, results.forks): its CIs are NaN; its
test is McNemar's exact p on those pairs, which is exact on any count. Where the task is the
unit (several sample seeds, or a fork's several points per task), fewer than MIN_CLUSTERS tasks
give neither an interval nor a test (test "too_few_tasks", p NaN): the report says so rather
than print a zero-width interval. A factor (results.factors) gets the very same test as the contrast of its two arms
(`paired_effect`), so one question has one answer.
"""

from __future__ import annotations

import gc
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from results.columns import C
from results.errors import UsageError
from results.heap import gives_back
from results.load import PAIR_FIELDS
from results.power import POWER, design_of, mde
from results.resampling import (
    MIN_CLUSTERS,
    N_BOOT,
    SEED,
    cluster_bootstrap,
    cluster_ci,
    paired_bootstrap,
    percentile_ci,
    sign_flip,
)
from results.row_groups import row_keys
from results.stats import ALPHA, group_columns

CLUSTER = (C.suite, C.task_id)
T = TypeVar("T")


def parse_contrasts(
    spec: str | Sequence[str], present: Iterable[str], also: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """'allowed_json-raw,loc_obs-raw' -> [(a, b), ...]; both conditions must be present, by their
    name or another name of theirs (`also`: {other name: the present one}, results.spellings)."""
    also = dict(also or {})
    names = set(present) | set(also)
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else spec) if s.strip()]
    if not items:
        raise UsageError("no contrast given; write them as A-B, e.g. allowed_json-raw")
    listed = ", ".join(sorted(set(present))) + "".join(f"; {k} means {v}" for k, v in sorted(also.items()))
    out = []
    for item in items:
        cuts = [i for i, ch in enumerate(item) if ch == "-"]
        splits = [(item[:i], item[i + 1 :]) for i in cuts]
        found = [(a, b) for a, b in splits if a in names and b in names]
        if len(found) != 1:
            if len(splits) == 1:
                absent = [c for c in splits[0] if c not in names]
                raise UsageError(
                    f"contrast {item!r}: condition {', '.join(map(repr, absent))} absent from the records; "
                    f"present: {listed}"
                )
            raise UsageError(f"contrast {item!r} is not A-B of two present conditions ({listed})")
        a, b = (also.get(n, n) for n in found[0])
        if a == b:
            raise UsageError(f"contrast {item!r} compares a condition with itself")
        out.append((a, b))
    return out


# the smallest p-value a report gives: an exact p below it (0 discordant one way of 1,200 the other:
# 2 ** -1199) is below what a float holds and would read 0.0; it is given as this bound instead,
# never as 0 (the text writes it "< 1e-300")
P_FLOOR = 1e-300


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """Two-sided exact McNemar p from the discordant counts, at least P_FLOOR."""
    return max(P_FLOOR, float(mcnemar([[0, a_only], [b_only, 0]], exact=True).pvalue))


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm step-down adjusted p-values; NaN entries (no pairs) stay NaN and are not counted."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, math.nan)
    mask = ~np.isnan(p)
    if mask.any():
        out[mask] = _without_rescan(lambda: multipletests(p[mask], method="holm")[1])
    # a p at the floor stands for one below a float's range (< 5e-324): times any count of tests it
    # is still below the floor, so its adjusted p is the same bound
    out[mask & (p <= P_FLOOR)] = P_FLOOR
    return out


def _without_rescan(call: Callable[[], T]) -> T:
    """statsmodels' Holm runs gc.collect(), which rescans every live object: about 1 s per call
    with 100,000 records loaded. The objects that exist before the call are set aside (frozen)
    while it runs and collected as usual afterwards; nothing is frozen if someone else froze first."""
    if gc.get_freeze_count():
        return call()
    gc.freeze()
    try:
        return call()
    finally:
        gc.unfreeze()


@dataclass
class ContrastResult:
    table: pd.DataFrame  # one row per contrast x group, see `_row`
    unpaired: pd.DataFrame  # episodes of either arm with no usable partner, with the reason


# an arm (`_arm`): its valid rows, and its episodes each once with their status
Arm = tuple[pd.DataFrame, pd.DataFrame]


def _arm(df: pd.DataFrame, condition: str, key: np.ndarray) -> Arm:
    """One condition's valid rows (their episode key, row position, success and model calls) and
    its episodes, each once: ok when any valid row has it, else a harness error (a harness error
    that a resume retried successfully is ok), with the position of one of its rows. `key`: each
    row's episode as one integer (`row_keys` of PAIR_FIELDS)."""
    at = np.flatnonzero((df[C.condition] == condition).to_numpy())
    success = df[C.success].iloc[at]
    valid = success.notna().to_numpy()
    rows = {"key": key[at], "row": at, C.success: success.to_numpy()}
    if C.model_calls in df:
        rows[C.model_calls] = df[C.model_calls].iloc[at].to_numpy()
    ok = pd.DataFrame({k: v[valid] for k, v in rows.items()})
    keys = pd.DataFrame({"key": key[at], "row": at, "ok": valid})
    return ok, keys.sort_values("ok", kind="stable").drop_duplicates("key", keep="last")


def pair(df: pd.DataFrame, a: str, b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Paired rows (columns success_a/_b, model_calls_a/_b + PAIR_FIELDS) and the unpaired ones."""
    key = row_keys(df, PAIR_FIELDS)
    return _pair(df, a, b, _arm(df, a, key), _arm(df, b, key), PAIR_FIELDS)


def _status(ok: pd.Series) -> np.ndarray:
    """An arm's episodes' `ok` after the outer merge, as the unpaired table names it."""
    return np.where(ok.isna(), "missing", np.where(ok.fillna(False).astype(bool), "ok", C.harness_error))


@gives_back
def _pair(
    df: pd.DataFrame, a: str, b: str, arm_a: Arm, arm_b: Arm, fields: Sequence[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pairs of two arms, in arm a's row order, with the key `fields` of their rows, and the
    unpaired episodes (every key field), in the order of their keys as text."""
    (ok_a, keys_a), (ok_b, keys_b) = arm_a, arm_b
    merged = ok_a.merge(ok_b, on="key", suffixes=("_a", "_b"), validate="one_to_one").sort_values("row_a")
    paired = df[list(fields)].take(merged["row_a"].to_numpy()).reset_index(drop=True)
    for name in merged.columns.drop(["key", "row_a", "row_b"]):
        paired[name] = merged[name].to_numpy()
    both = keys_a.merge(keys_b, on="key", how="outer", suffixes=("_a", "_b"))
    both = both[~(both["ok_a"].eq(True) & both["ok_b"].eq(True))]
    rows = both["row_a"].fillna(both["row_b"]).to_numpy(dtype=np.int64)
    lost = df[list(PAIR_FIELDS)].take(rows).reset_index(drop=True)
    lost = lost.assign(contrast=f"{a}-{b}", a=a, b=b, status_a=_status(both["ok_a"]), status_b=_status(both["ok_b"]))
    # the order of the keys as text, field by field
    order = lost[list(PAIR_FIELDS)].astype(str).sort_values(list(PAIR_FIELDS), kind="stable").index
    # the fork point names an unpaired episode only among forks (harness.fork)
    keys = [f for f in PAIR_FIELDS if f != C.fork or (lost[f] != "").any()]
    unpaired = lost.loc[order, ["contrast", "a", "b", *keys, "status_a", "status_b"]].reset_index(drop=True)
    return paired, unpaired


def _replicates(d: np.ndarray, clusters: np.ndarray, sampling: bool, alone: bool, n_boot: int, seed: int) -> np.ndarray:
    if alone:
        return np.array([])  # no interval: percentile_ci gives NaN, the report "no CI"
    return cluster_bootstrap(d, clusters, n_boot, seed) if sampling else paired_bootstrap(d, n_boot, seed)


def paired_effect(
    sa: np.ndarray, sb: np.ndarray, clusters: np.ndarray, n_boot: int, seed: int
) -> tuple[dict[str, object], np.ndarray, bool, bool]:
    """One answer for one question, whoever asks it (a contrast, a factor): a - b over pairs, in
    the pairs' own unit. One pair per task: a paired bootstrap CI and McNemar's exact test. Several
    pairs per task (sample seeds, or a fork's points): the task is the unit, a task-cluster
    bootstrap and a sign-flip test on per-task means, given at least MIN_CLUSTERS tasks, else
    neither (test "too_few_tasks"). Returns the row's fields, the per-pair differences, whether
    the task is the unit and whether there are too few units for any interval."""
    d = sa.astype(float) - sb.astype(float)
    per_task = pd.Series(d).groupby(clusters).mean().to_numpy() if len(d) else d
    sampling = len(per_task) < len(d)
    # too few units (pairs, or tasks where the task is the unit) give no interval, as a fork's rates
    # get none (results.forks); McNemar is exact on any count, a sign flip needs MIN_CLUSTERS tasks
    alone = len(per_task) < MIN_CLUSTERS
    boot = _replicates(d, clusters, sampling, alone, n_boot, seed)
    a_only, b_only = int((sa & ~sb).sum()), int((~sa & sb).sum())
    test = ("too_few_tasks" if alone else "sign_flip") if sampling else "mcnemar_exact"
    # a Monte Carlo p says so: its draws and standard error (0 and 0 where the p is exact)
    p_draws, p_se = 0, 0.0
    if test == "sign_flip":
        flip = sign_flip(per_task, n_boot, seed)
        p_value, p_draws, p_se = flip.p, flip.draws, flip.se
    else:
        p_value = mcnemar_exact(a_only, b_only) if test == "mcnemar_exact" and len(d) else math.nan
    row: dict[str, object] = {
        "lane": "sampling" if sampling else "paired",
        "n_pairs": len(d),
        "n_tasks": len(per_task),
        "rate_a": float(sa.mean()) if len(d) else math.nan,
        "rate_b": float(sb.mean()) if len(d) else math.nan,
        "diff": float(d.mean()) if len(d) else math.nan,
        "a_only": a_only,
        "b_only": b_only,
        "test": test,
        "p_value": p_value,
        "p_draws": p_draws,
        "p_se": p_se,
    }
    row["ci_low"], row["ci_high"] = _ci(boot, row["diff"], len(per_task), sampling)  # type: ignore[arg-type]
    return row, d, sampling, alone


def _ci(boot: np.ndarray, estimate: float, tasks: int, sampling: bool) -> tuple[float, float]:
    """The percentile interval; where the task is the unit, widened for its few clusters (cluster_ci)."""
    return cluster_ci(boot, estimate, tasks) if sampling else percentile_ci(boot)


@gives_back
def _row(part: pd.DataFrame, n_boot: int, seed: int) -> dict[str, object]:
    sa, sb = part["success_a"].astype(bool).to_numpy(), part["success_b"].astype(bool).to_numpy()
    # task numbers in order of first appearance (tuples of arrow strings would cost seconds at 100k pairs)
    clusters = part.groupby(list(CLUSTER), sort=False).ngroup().to_numpy()
    row, d, sampling, alone = paired_effect(sa, sb, clusters, n_boot, seed)
    row[DESIGN] = design_of(sa, sb, clusters)
    if "model_calls_a" in part:
        ca = pd.to_numeric(part["model_calls_a"], errors="coerce").to_numpy(dtype=float)
        cb = pd.to_numeric(part["model_calls_b"], errors="coerce").to_numpy(dtype=float)
        dc = ca - cb
        if len(dc) and not np.isnan(dc).any():
            task_dc = pd.Series(dc).groupby(clusters).mean().to_numpy()
            cboot = _replicates(dc, clusters, sampling, alone, n_boot, seed)
            row.update(
                calls_a=float(ca.mean()),
                calls_b=float(cb.mean()),
                calls_diff=float(dc.mean()),
                calls_p=math.nan if alone else sign_flip(task_dc, n_boot, seed).p,
            )
            row["calls_ci_low"], row["calls_ci_high"] = _ci(cboot, float(dc.mean()), len(task_dc), sampling)
    return row


# the pilot's design of a row, until its family's size is known (dropped from the table)
DESIGN = "_design"


def with_mde(table: pd.DataFrame, groups: Sequence[str], designs: pd.Series, alpha: float = ALPHA) -> pd.Series:
    """Each row's minimum detectable effect (results.power.mde, at POWER) at its own size, Holm's
    first step over the rows of its group that have a test (alpha / k): what a null result could
    have seen. NaN where no test ran."""
    out = pd.Series(math.nan, index=table.index)
    parts = table.groupby(list(groups), sort=False) if groups else [(None, table)]
    for _, part in parts:
        tested = part.index[part["p_value"].notna()]
        for i in tested:
            design = designs[i]
            out[i] = mde(design, design.units, alpha / len(tested), POWER)
    return out


CALL_COLUMNS = ("calls_a", "calls_b", "calls_diff", "calls_ci_low", "calls_ci_high", "calls_p")


@gives_back
def contrasts(
    df: pd.DataFrame,
    pairs: Sequence[tuple[str, str]],
    by: Sequence[str] | None = None,
    n_boot: int = N_BOOT,
    seed: int = SEED,
) -> ContrastResult:
    """Each (a, b) in `pairs`, per model (and key columns of `by`): diff = rate_a - rate_b.

    Table columns: contrast, a, b, <group>, lane (paired|sampling), n_pairs, n_tasks, rate_a,
    rate_b, diff, ci_low, ci_high, a_only, b_only (discordant counts), test, p_value, p_holm,
    calls_a, calls_b, calls_diff, calls_ci_low, calls_ci_high, calls_p, calls_p_holm, n_unpaired,
    mde (the smallest difference the row's test detects at its size: `with_mde`).
    """
    present = set(df[C.condition].unique())
    for a, b in pairs:
        for c in (a, b):
            if c not in present:
                raise UsageError(f"contrast {a}-{b}: condition {c!r} absent; present: {', '.join(sorted(present))}")
    # only key columns can split pairs; other `by` columns shape the summary tables alone
    gcols = [c for c in group_columns(df, by) if c in PAIR_FIELDS]
    rows, lost = [], []
    arms: dict[str, Arm] = {}  # a condition in several contrasts is split once
    # and let go after its last contrast
    uses = Counter(c for pair in pairs for c in pair)
    key = row_keys(df, PAIR_FIELDS)
    for a, b in pairs:
        for c in (a, b):
            if c not in arms:
                arms[c] = _arm(df, c, key)
        paired, unpaired = _pair(df, a, b, arms[a], arms[b], [*CLUSTER, *(c for c in gcols if c not in CLUSTER)])
        for c in (a, b):
            uses[c] -= 1
            if not uses[c]:
                del arms[c]
        lost.append(unpaired)
        groups = df.loc[df[C.condition].isin([a, b]), gcols]
        for keys, _ in groups.groupby(gcols, sort=True):
            mask = np.ones(len(paired), dtype=bool)
            for col, val in zip(gcols, keys, strict=True):
                mask &= (paired[col] == val).to_numpy()
            group = dict(zip(gcols, keys, strict=True))
            n_lost = unpaired
            for col, val in group.items():
                n_lost = n_lost[n_lost[col] == val]
            rows.append(
                {
                    "contrast": f"{a}-{b}",
                    "a": a,
                    "b": b,
                    **group,
                    **_row(paired[mask], n_boot, seed),
                    "n_unpaired": len(n_lost),
                }
            )
    table = pd.DataFrame(rows)
    for col in CALL_COLUMNS:
        if col not in table and not table.empty:
            table[col] = math.nan
    if not table.empty:
        table["p_holm"] = math.nan
        table["calls_p_holm"] = math.nan
        for _, part in table.groupby(gcols, sort=False):
            idx = part.index
            table.loc[idx, "p_holm"] = holm(table.loc[idx, "p_value"])
            table.loc[idx, "calls_p_holm"] = holm(table.loc[idx, "calls_p"])
        table["mde"] = with_mde(table, gcols, table[DESIGN])
        table = table.drop(columns=DESIGN)
    # an empty frame among them would turn the integer keys into floats (a budget of "4.0")
    lost = [u for u in lost if not u.empty]
    unpaired = pd.concat(lost, ignore_index=True) if lost else pd.DataFrame()
    return ContrastResult(table=table, unpaired=unpaired)
