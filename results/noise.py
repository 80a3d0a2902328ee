"""The noise floor: how much two runs of the very same grid differ, and what difference exceeds it.

Repeats of one episode key are its sample seeds (`--seeds`, with a temperature above 0 or a server
that is not bit-deterministic), and its runs where several run directories of one grid are read
together. Per model and condition (and suite and budget), over the tasks played at least twice:

- `flip`: the share of tasks whose verdict differs between repeats (neither always solved nor
  never), the figure of tau-bench #57; `disagree`: the chance that two repeats of a task disagree,
  averaged over tasks (2 s (k - s) / (k (k - 1)) with s solved of k);
- `spread`: the standard deviation of solved/N across the repeats, each repeat a run;
- `unpaired`: the smallest gap between two single runs' rates that Fisher's exact test calls real,
  the runs taken as two independent samples of N tasks, one at the repeats' rate: what comparing
  two published scores allows;
- `repeat`: the gap two single runs of one grid exceed by chance only alpha of the time (tau2-bench
  #540's "two single runs must differ by"): t * sqrt(2) * spread, t the two-sided 1 - alpha/2
  quantile of Student's t with runs - 1 degrees of freedom, `runs` the repeats the spread is
  estimated from. Two new runs' gap over sqrt(2) times an SD from r runs is t-distributed with r - 1
  degrees of freedom (a prediction interval; Hahn & Meeker 1991, Statistical Intervals, 4.7),
  where a normal z made it a 9% threshold from 8 repeats and 12% from 5 (issue 64). It assumes the
  runs' rates are about normal (tens of tasks) and the runs independent repeats of one grid;
- `paired`: the smallest difference the report's exact McNemar test calls real over the same N
  tasks paired, when the repeats' own disagreement is there: the noise's discordant pairs split
  evenly, plus e pairs one way; e / N. `gain`: unpaired / paired, the factor by which pairing
  narrows what can be seen (its square: the tasks it saves).
"""

from __future__ import annotations

import math

import pandas as pd
from scipy.stats import fisher_exact
from scipy.stats import t as student_t

from results.columns import C
from results.contrasts import mcnemar_exact
from results.stats import ALPHA

KEY = [C.model, C.suite, C.budget, C.condition]
COLUMNS = [
    *KEY,
    "tasks",
    "repeats",
    "runs",
    "rate",
    "flip",
    "disagree",
    "spread",
    "unpaired",
    "repeat",
    "paired",
    "gain",
]


def _repeat_label(df: pd.DataFrame) -> pd.Series:
    seeds = df[C.sample_seed].astype(str)
    runs = df["run_dir"].astype(str) if "run_dir" in df and df["run_dir"].nunique() > 1 else None
    return seeds if runs is None else runs + "#" + seeds


def unpaired_threshold(n: int, rate: float, alpha: float = ALPHA) -> float:
    """e / n for the fewest e more tasks solved by a second run of n than a first run's round(rate * n)
    (fewer, where there is more room below) that make Fisher's exact p at most alpha."""
    solved = round(rate * n)
    room, sign = (n - solved, 1) if n - solved >= solved else (solved, -1)
    if room == 0 or fisher_exact([[solved, n - solved], [solved + sign * room, n - solved - sign * room]])[1] > alpha:
        return math.nan
    lo, hi = 0, room  # the p falls as the gap grows
    while hi - lo > 1:
        mid = (lo + hi) // 2
        other = solved + sign * mid
        lo, hi = (lo, mid) if fisher_exact([[solved, n - solved], [other, n - other]])[1] <= alpha else (mid, hi)
    return hi / n


def paired_threshold(n: int, disagree: float, alpha: float = ALPHA) -> float:
    """e / n for the fewest e pairs one way that make McNemar's exact p at most alpha, on top of
    the noise's round(disagree * n) discordant pairs split evenly; NaN where no e fits in n."""
    noise = round(disagree * n)
    a, b = noise - noise // 2, noise // 2
    for extra in range(n - noise + 1):
        if mcnemar_exact(a + extra, b) <= alpha:
            return extra / n
    return math.nan


def _row(part: pd.DataFrame, alpha: float) -> dict[str, float | int]:
    by_task = part.groupby([C.suite, C.task_id])["_ok"]
    k, s = by_task.size(), by_task.sum()
    repeated = k >= 2
    k, s = k[repeated], s[repeated]
    n = int(len(k))
    if not n:
        return {"tasks": 0, "repeats": 0}
    disagree = float((2 * s * (k - s) / (k * (k - 1))).mean())
    flip = float(((s > 0) & (s < k)).mean())
    rate = float(s.sum() / k.sum())
    kept = part.set_index([C.suite, C.task_id]).index.isin(k.index)
    runs = part[kept].groupby("_repeat")["_ok"].mean()
    spread = float(runs.std(ddof=1)) if len(runs) > 1 else math.nan
    # the small-sample quantile of the runs the spread rests on (module doc)
    t = float(student_t.isf(alpha / 2, len(runs) - 1)) if len(runs) > 1 else math.nan
    unpaired = unpaired_threshold(n, rate, alpha)
    paired = paired_threshold(n, disagree, alpha)
    return {
        "tasks": n,
        "repeats": int(k.max()),
        "runs": int(len(runs)),
        "rate": rate,
        "flip": flip,
        "disagree": disagree,
        "spread": spread,
        "unpaired": unpaired,
        "repeat": t * math.sqrt(2) * spread,
        "paired": paired,
        "gain": unpaired / paired if paired else math.nan,
    }


def noise_floor(df: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """One row per model, suite, budget and condition that has tasks played at least twice."""
    rows = df[df[C.success].notna()]
    if rows.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = rows.assign(_ok=rows[C.success].astype(bool).astype(float), _repeat=_repeat_label(rows))
    # a fork's episodes repeat per fork point, not per task: each point is its own "task" here
    if C.fork in rows and (rows[C.fork].astype(str) != "").any():
        rows = rows.assign(**{C.task_id: rows[C.task_id].astype(str) + "@" + rows[C.fork].astype(str)})
    out = []
    for key, part in rows.groupby(KEY, sort=True):
        row = _row(part, alpha)
        if row["tasks"]:
            out.append({**dict(zip(KEY, key, strict=True)), **row})
    return pd.DataFrame(out, columns=COLUMNS)
