"""The power of the report's own paired tests: the smallest effect a design detects, and the size it needs.

A comparison is planned in the unit `results.contrasts.paired_effect` tests it in, from what a
pilot measured of it (`Design`):

- **One pair per task** (the paired lane): the exact McNemar test. Its power is computed exactly,
  not approximated: the discordant pairs D ~ Binomial(n, psi), the A-only pairs given D ~
  Binomial(D, (psi + delta) / (2 psi)), and the test rejects where its own two-sided exact p
  (statsmodels' `mcnemar(exact=True)`, the report's) is at most alpha. psi is the pilot's
  discordance (both off-diagonal rates, a_only + b_only over pairs), held fixed as the effect
  changes (Connor 1987, Biometrics 43:207; Miettinen 1968), and never below |delta| (an effect
  of delta needs that many discordant pairs).
- **Several pairs per task** (sample seeds, a fork's points): the task is the unit and the test is
  a sign flip of per-task mean differences, planned by its large-sample power (`_sign_flip_power`).
  The variance of a task's mean over m pairs is
  sigma_b^2 + sigma_w^2 / m (the design effect 1 + (m - 1) rho of Donner & Klar 2000, Design and
  Analysis of Cluster Randomization Trials, ch. 5): sigma_b^2 the between-task variance of the task
  effect (one-way ANOVA moment estimator over the pilot's tasks), sigma_w^2 = psi - delta^2 - sigma_b^2
  the rest of a pair difference's variance at the effect planned. A sign flip over k tasks
  cannot give p below 2 / 2^k, so fewer tasks than that floor have no power, whatever the effect.

Holm: a family of k tests is planned at alpha / k, Holm's first step: under Holm each hypothesis is
rejected at least whenever its p is below alpha / k, so the power stated is a lower bound.
`results.power_sim.simulate` checks all of this by drawing studies from a known model of pairs and
running the report's test on each (tests/results/test_power.py).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.stats import binom, norm

from results.resampling import MIN_CLUSTERS

# a study this large is past planning: no size is given beyond it
MAX_UNITS = 10_000_000
# the power a minimum detectable effect is stated at, unless asked otherwise (Cohen 1988's convention)
POWER = 0.8


@dataclass(frozen=True)
class Design:
    """What a pilot measured of one comparison."""

    clustered: bool  # the task is the unit (several pairs per task)
    n_tasks: int
    n_pairs: int
    psi: float  # discordance: the share of pairs whose two arms disagree
    between: float  # sigma_b^2, the between-task variance of the task effect (0 unless clustered)
    effect: float  # the pilot's own difference, a - b

    @property
    def per_task(self) -> float:
        return self.n_pairs / self.n_tasks if self.n_tasks else 1.0

    @property
    def units(self) -> int:
        """The pilot's size in its unit: tasks where clustered, else pairs."""
        return self.n_tasks if self.clustered else self.n_pairs

    @property
    def icc(self) -> float:
        """rho = sigma_b^2 over a pair difference's whole variance, at the pilot's own effect."""
        total = self.psi - self.effect**2
        return min(1.0, self.between / total) if total > 0 else math.nan


def design_of(sa: np.ndarray, sb: np.ndarray, clusters: np.ndarray) -> Design:
    """A pilot's paired outcomes (bools) of arms a and b, and each pair's task number."""
    sa, sb = sa.astype(bool), sb.astype(bool)
    d = sa.astype(float) - sb.astype(float)
    n = len(d)
    groups = pd.Series(d).groupby(clusters)
    means, sizes = groups.mean().to_numpy(), groups.size().to_numpy()
    tasks = len(means)
    clustered = tasks < n
    between = 0.0
    if clustered and tasks > 1:
        # one-way random-effects ANOVA (unequal sizes): sigma_b^2 = (MSB - MSW) / m0
        grand = d.mean()
        msb = float((sizes * (means - grand) ** 2).sum() / (tasks - 1))
        within = float(((d - groups.transform("mean").to_numpy()) ** 2).sum())
        msw = within / (n - tasks) if n > tasks else 0.0
        m0 = (n - (sizes**2).sum() / n) / (tasks - 1)
        between = max(0.0, (msb - msw) / m0)
    return Design(
        clustered=clustered,
        n_tasks=tasks,
        n_pairs=n,
        psi=float((sa != sb).mean()) if n else 0.0,
        between=between,
        effect=float(d.mean()) if n else 0.0,
    )


def psi_at(design: Design, delta: float) -> float:
    return max(design.psi, abs(delta))


@functools.lru_cache(maxsize=64)
def _critical(n: int, alpha: float) -> np.ndarray:
    """Per discordant count D = 0..n, the largest A-only (or B-only) count c whose two-sided exact
    p, min(1, 2 cdf(c)), is at most alpha (-1: none). It depends on n and alpha alone, so a
    bisection over the effect computes it once."""
    discordant = np.arange(n + 1)
    first = binom.ppf(alpha / 2, discordant, 0.5)
    c: np.ndarray = np.where(binom.cdf(first, discordant, 0.5) * 2 <= alpha, first, first - 1)
    c.setflags(write=False)  # shared by every caller of the cache
    return c


def _mcnemar_power(n: int, psi: float, delta: float, alpha: float) -> float:
    if n < 1 or psi <= 0:
        return 0.0
    psi = min(psi, 1.0)
    # only the discordant counts with any weight: 12 standard deviations about n psi
    spread = 12 * math.sqrt(n * psi * (1 - psi)) + 2
    discordant = np.arange(max(0, int(n * psi - spread)), min(n, int(n * psi + spread)) + 1)
    weights = binom.pmf(discordant, n, psi)
    c = _critical(n, alpha)[discordant]
    share = min(1.0, max(0.0, (psi + delta) / (2 * psi)))
    low = np.where(c >= 0, binom.cdf(c, discordant, share), 0.0)
    high = np.where(c >= 0, binom.sf(discordant - c - 1, discordant, share), 0.0)
    both = np.where(2 * c >= discordant, 1.0, low + high)
    return float(min(1.0, (weights * both).sum()))


def between_at(design: Design, delta: float) -> float:
    """sigma_b^2 at the effect planned: at most (psi - |delta|)^2, so that every task's effect, delta
    +- sigma_b, has a_only and b_only rates of at least 0 (the model `simulate` draws from)."""
    return min(design.between, (psi_at(design, delta) - abs(delta)) ** 2)


def _task_sd(design: Design, delta: float, per_task: float) -> float:
    between = between_at(design, delta)
    within = max(0.0, psi_at(design, delta) - delta**2 - between)
    return math.sqrt(between + within / max(per_task, 1.0))


def _sign_flip_power(delta: float, sd: float, tasks: int, alpha: float) -> float:
    """A sign flip of per-task means rejects where |sum| passes its null spread, which is the
    uncentered second moment, sd^2 + delta^2 per task (the randomization distribution, Lehmann &
    Romano 2005, Testing Statistical Hypotheses, 15.2); the mean itself spreads by sd / sqrt(tasks).
    Below floor_tasks the test cannot reject at all (power_at)."""
    crit = norm.isf(alpha / 2) * math.sqrt(sd**2 + delta**2)
    shift = abs(delta) * math.sqrt(tasks)
    return float(norm.cdf((shift - crit) / sd) + norm.cdf((-shift - crit) / sd))


def floor_tasks(alpha: float) -> int:
    """The fewest tasks whose sign flip can reach alpha (2 / 2^k <= alpha), and the report's minimum."""
    return max(MIN_CLUSTERS, math.ceil(1 - math.log2(alpha)))


def power_at(design: Design, units: int, delta: float, alpha: float, per_task: float | None = None) -> float:
    """The power of the report's test with `units` (pairs, or tasks of `per_task` pairs each)."""
    if not design.clustered:
        return _mcnemar_power(units, psi_at(design, delta), delta, alpha)
    if units < floor_tasks(alpha) or delta == 0:
        return 0.0 if delta else alpha
    if psi_at(design, delta) <= abs(delta):
        return _one_way_power(delta, units, per_task or design.per_task, alpha)
    sd = _task_sd(design, delta, per_task or design.per_task)
    if sd == 0:
        return 1.0
    return _sign_flip_power(delta, sd, units, alpha)


def _one_way_power(delta: float, tasks: int, per_task: float, alpha: float) -> float:
    """Every discordant pair one way (a pilot that saw none, planned at the least discordance an
    effect needs): each task's mean is 0 or of the effect's sign, and the sign flip's p is exactly
    2 / 2^K for the K tasks not 0. It rejects when K >= floor_tasks' bound, K ~ Binomial(tasks, q),
    q the chance that a task's pairs are not all concordant. The normal approximation is far off
    here (10 points at 51 tasks), this is exact."""
    needed = math.ceil(1 - math.log2(alpha))
    q = 1 - (1 - abs(delta)) ** max(1, round(per_task))
    return float(binom.sf(needed - 1, tasks, q))


def mde(design: Design, units: int, alpha: float, power: float, per_task: float | None = None) -> float:
    """The smallest |a - b| detected with `power` at `units`; NaN when even a whole difference is not."""
    if power_at(design, units, 1.0, alpha, per_task) < power:
        return math.nan
    lo, hi = 0.0, 1.0
    for _ in range(20):  # bisection to 1e-6 of a whole difference: power grows with the effect
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if power_at(design, units, mid, alpha, per_task) >= power else (mid, hi)
    return hi


def size_for(design: Design, delta: float, alpha: float, power: float, per_task: float | None = None) -> int | None:
    """The fewest units (pairs, or tasks of `per_task` pairs) reaching `power` at `delta`; None past
    MAX_UNITS. The first size at which the power reaches it (an exact test's power is a sawtooth
    in n; the power at the size is stated beside it)."""
    if delta == 0:
        return None
    lo = floor_tasks(alpha) if design.clustered else 1
    if power_at(design, lo, delta, alpha, per_task) >= power:
        return lo
    hi = lo
    while power_at(design, hi, delta, alpha, per_task) < power:
        if hi > MAX_UNITS:
            return None
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if power_at(design, mid, delta, alpha, per_task) >= power else (mid, hi)
    return hi


def per_task_for(design: Design, delta: float, alpha: float, power: float) -> float | None:
    """Pairs per task (seeds, fork points) that reach `power` with the pilot's tasks; None where no
    number does (the between-task variance alone is too much, or too few tasks)."""
    if not design.clustered or power_at(design, design.n_tasks, delta, alpha, 1e12) < power:
        return None
    lo, hi = 1.0, 1.0
    while power_at(design, design.n_tasks, delta, alpha, hi) < power:
        lo, hi = hi, hi * 2
    while hi - lo > 0.5:
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if power_at(design, design.n_tasks, delta, alpha, mid) >= power else (mid, hi)
    return float(math.ceil(hi))
