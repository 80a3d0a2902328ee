"""Power checked, not trusted: studies drawn from a model of pairs, each tested by the report.

The model is not the formula's (`results.power`), so that the two can disagree where the formula is
wrong (issue 64: a simulation from the formula's own capped model agreed with a plan that studies
missed by 14 points). A study at effect delta is drawn from the pilot itself, exponentially tilted
to the effect (Efron 1981, Canadian Journal of Statistics 9:139; the bootstrap under an alternative):

- several pairs per task (a `Design` that carries its tasks): whole pilot tasks are drawn with
  replacement, task t with probability proportional to exp(lambda mu_t), mu_t its mean difference,
  lambda such that the drawn tasks' expected mean is delta. Each drawn task keeps its pairs as the
  pilot played them, so the between- and within-task variance are the pilot's, not a model's;
- one pair per task: a pair's difference (+1, 0, -1) drawn from the pilot's shares, tilted the same
  way: the discordance grows with the effect by the tilt, not by `psi_at`.

Where tilting cannot reach delta (the pilot has no task on the far side of it) the model is the
formula's own, drawn: per task, Dirichlet(c pi) shares of A-only, B-only and concordant pairs, pi at
`psi_at(delta)` and c = 1 / rho - 1, whose intraclass correlation is exactly rho (a three-category
beta-binomial), or cells at `psi_at(delta)` for one pair per task. A pilot that never disagreed
(psi 0) is planned one way, and drawn so.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

from results.contrasts import paired_effect
from results.power import Design, icc_of, psi_at
from results.resampling import N_BOOT


def tilt(values: np.ndarray, weights: np.ndarray, delta: float) -> np.ndarray | None:
    """Probabilities proportional to weights * exp(lambda values) whose mean of values is delta;
    None where delta is not strictly inside the values' range (among those with weight)."""
    live = weights > 0
    if not live.any() or not values[live].min() < delta < values[live].max():
        return None
    logw = np.log(np.where(live, weights, 1.0))

    def probs(lam: float) -> np.ndarray:
        z = np.where(live, logw + lam * values, -np.inf)
        out: np.ndarray = np.exp(z - logsumexp(z))
        return out

    lo, hi = -1.0, 1.0
    while probs(lo) @ values > delta:
        lo *= 2
    while probs(hi) @ values < delta:
        hi *= 2
    lam = brentq(lambda x: float(probs(x) @ values) - delta, lo, hi, xtol=1e-12)
    return probs(lam)


def _study(design: Design, units: int, delta: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One drawn study: per pair its difference (+1, 0, -1), and its task number."""
    m = max(1, round(design.per_task)) if design.clustered else 1
    if design.clustered and design.tasks:
        counts = np.array(design.tasks, dtype=float)
        p = tilt((counts[:, 0] - counts[:, 1]) / counts[:, 2], np.ones(len(counts)), delta)
        if p is not None:
            picked = counts[rng.choice(len(counts), size=units, p=p)].astype(int)
            sizes = picked[:, 2]
            d = np.concatenate([np.repeat([1, -1, 0], [a, b, n - a - b]) for a, b, n in picked])
            return d, np.repeat(np.arange(units), sizes)
    psi = psi_at(design, delta)
    if not design.clustered and design.psi > 0:
        shares = np.array([(design.psi + design.effect) / 2, 1 - design.psi, (design.psi - design.effect) / 2])
        p = tilt(np.array([1.0, 0.0, -1.0]), shares, delta)
        if p is not None:
            return rng.choice(np.array([1, 0, -1]), size=units, p=p), np.arange(units)
    cells = np.array([(psi + delta) / 2, 1 - psi, (psi - delta) / 2]).clip(0)
    rho = icc_of(design)
    if not design.clustered or rho <= 0 or design.psi <= 0:
        task_cells = np.tile(cells, (units, 1))
    elif rho >= 1:  # every pair of a task alike: the task's one category for all its pairs
        task_cells = np.eye(3)[rng.choice(3, size=units, p=cells / cells.sum())]
    else:
        task_cells = rng.dirichlet(np.maximum(cells, 1e-9) * (1 / rho - 1), size=units)
    u = rng.random((units, m))
    a_only, b_only = task_cells[:, :1], task_cells[:, 2:]
    d = np.where(u < a_only, 1, np.where(u >= 1 - b_only, -1, 0)).ravel()
    return d, np.repeat(np.arange(units), m)


def simulate(
    design: Design,
    units: int,
    delta: float,
    alpha: float,
    studies: int = 1000,
    seed: int = 0,
    n_boot: int = N_BOOT,
    tick: Callable[[int, int], None] | None = None,
) -> float:
    """The share of `studies` drawn at `units` (tasks of the pilot's pairs, or pairs) and effect
    `delta` (module doc) that the report's own test (`paired_effect`) rejects at `alpha`.
    `tick(done, studies)` before the first study and after each: a caller's progress (each runs the
    report's test, `n_boot` draws)."""
    rng = np.random.default_rng(seed)
    rejected = 0
    if tick is not None:
        tick(0, studies)
    for i in range(studies):
        d, clusters = _study(design, units, delta, rng)
        row, _, _, _ = paired_effect(d > 0, d < 0, clusters, n_boot, seed + i)
        rejected += bool(row["p_value"] <= alpha)  # type: ignore[operator]
        if tick is not None:
            tick(i + 1, studies)
    return rejected / studies if studies else math.nan
