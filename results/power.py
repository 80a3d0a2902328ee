"""The power of the report's own paired tests: the smallest effect a design detects, and the size it needs.

A comparison is planned in the unit `results.contrasts.paired_effect` tests it in, from what a
pilot measured of it (`Design`). What changes with the effect planned, delta, is the discordance
psi (the share of pairs whose arms disagree): it grows with the effect as the mean absolute value of
a normal latent difference whose mean is the effect, psi(delta) = E|delta + e|, e ~ N(0, s^2) with s
fitted so that psi(pilot's effect) is the pilot's discordance (`psi_at`). An effect adds discordant
pairs one way and removes a few the other way; the discordance never falls below |delta|, and a
pilot all of whose discordant pairs go one way (s = 0) is planned one way. (Before issue 64 psi was
held at the pilot's value, which overstated the power of a null's MDE by about 0.7 points.)

- **One pair per task** (the paired lane): the exact McNemar test. Its power is computed exactly,
  not approximated: the discordant pairs D ~ Binomial(n, psi), the A-only pairs given D ~
  Binomial(D, (psi + delta) / (2 psi)), and the test rejects where its own two-sided exact p
  (statsmodels' `mcnemar(exact=True)`, the report's) is at most alpha (Connor 1987, Biometrics
  43:207; Miettinen 1968).
- **Several pairs per task** (sample seeds, a fork's points): the task is the unit and the test is
  a sign flip of per-task mean differences, planned by its large-sample power (`_sign_flip_power`).
  A pair difference's variance at delta is psi(delta) - delta^2; the pilot's intraclass correlation
  rho = sigma_b^2 / (psi - effect^2) (sigma_b^2 the between-task variance of the task effect, the
  one-way ANOVA moment estimator over the pilot's tasks) is held, so a task's mean over m pairs
  varies by (psi(delta) - delta^2) (rho + (1 - rho) / m), the design effect 1 + (m - 1) rho of Donner &
  Klar 2000 (Design and Analysis of Cluster Randomization Trials, ch. 5); at the pilot's own pairs per
  task, the pilot's task means' own variance, scaled the same way (`_task_sd`), and where a study is
  planned from the pilot (`Design.pilot_df`), that variance at its expectation given the estimate.
  Nothing the pilot measured is capped away: before issue 64 sigma_b^2 was capped at (psi - |delta|)^2
  so that a two-point model of task effects stayed valid, and a pilot whose seeds agree (a high ICC)
  was planned at 80% where its studies reached 66%. A sign flip over k tasks cannot give p below
  2 / 2^k, so fewer tasks than that floor have no power, whatever the effect.

Holm: a family of k tests is planned at alpha / k, Holm's first step: under Holm each hypothesis is
rejected at least whenever its p is below alpha / k, so the power stated is a lower bound.
`results.power_sim.simulate` checks this by drawing studies from a model that is not the formula's
(the pilot's own tasks, tilted to the effect) and running the report's test on each; and
benchmarks/calibration.py checks both against studies played with planted truth.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import betaln
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
    # per task (clustered only): its A-only pairs, B-only pairs and pairs, which results.power_sim
    # resamples; () where only the summaries above are known
    tasks: tuple[tuple[int, int, int], ...] = ()
    # where > 0, the clustered power is the expectation over the between-task variance's uncertainty,
    # estimated with this many degrees of freedom (the pilot's tasks - 1): what `power` plans with
    pilot_df: int = 0
    # the sample variance of the per-task mean differences (clustered; NaN where unknown): at the
    # pilot's own pairs per task the sign flip's spread, without the ICC's clip at 0
    task_var: float = math.nan

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
    counts: tuple[tuple[int, int, int], ...] = ()
    task_var = float(np.var(means, ddof=1)) if clustered and tasks > 1 else math.nan
    if clustered:
        table = (
            pd.DataFrame({"t": clusters, "a": sa & ~sb, "b": sb & ~sa})
            .groupby("t")
            .agg(a=("a", "sum"), b=("b", "sum"), m=("a", "size"))
        )
        counts = tuple((int(a), int(b), int(m)) for a, b, m in table.itertuples(index=False))
    return Design(
        clustered=clustered,
        n_tasks=tasks,
        n_pairs=n,
        psi=float((sa != sb).mean()) if n else 0.0,
        between=between,
        effect=float(d.mean()) if n else 0.0,
        tasks=counts,
        task_var=task_var,
    )


def _mean_abs(mu: float, s: float) -> float:
    """E|X| for X ~ N(mu, s^2) (the folded normal's mean)."""
    if s <= 0:
        return abs(mu)
    return float(s * math.sqrt(2 / math.pi) * math.exp(-(mu**2) / (2 * s**2)) + mu * (1 - 2 * norm.cdf(-mu / s)))


@functools.lru_cache(maxsize=1024)
def _latent_sd(psi: float, effect: float) -> float:
    """s with E|effect + e| = psi, e ~ N(0, s^2); 0 where psi <= |effect| (every discordant pair one way)."""
    if psi <= abs(effect) or psi <= 0:
        return 0.0
    hi = 1.0
    while _mean_abs(effect, hi) < psi:
        hi *= 2
    return float(brentq(lambda s: _mean_abs(effect, s) - psi, 0.0, hi, xtol=1e-12))


def psi_at(design: Design, delta: float) -> float:
    """The discordance at the effect planned (module doc): the pilot's at its own effect, growing with
    |delta - effect|, never below |delta|, at most 1."""
    return min(1.0, max(abs(delta), _mean_abs(delta, _latent_sd(design.psi, design.effect))))


def icc_of(design: Design) -> float:
    """rho, held as the effect changes; 0 for an unclustered design, 1 where the pilot's pairs never
    vary within a task."""
    if not design.clustered:
        return 0.0
    rho = design.icc
    return 1.0 if math.isnan(rho) else max(0.0, rho)


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


def _task_sd(design: Design, delta: float, per_task: float) -> np.ndarray:
    """The SD of a task's mean difference over `per_task` pairs at delta (module doc). Where
    `design.pilot_df` (df) is set, the variance is the pilot's estimate times df / (df - 2), its
    expectation given the estimate (the mean of df / chi^2_df, a flat prior on the log variance): a
    variance of task means from k tasks has k - 1 degrees of freedom, and planning with the estimate as
    if it were the truth gives studies less power than stated on average, power being concave in it
    (from a 24-task pilot with an ICC of 0.33, 74.7% where 80.4% was stated; benchmarks/calibration.py).
    The whole expected power over the estimate's spread (Julious & Owen 2006, Statistics in Medicine
    25:2467) overshot there: 86% where 80% was stated at a low ICC."""
    total = max(0.0, psi_at(design, delta) - delta**2)
    rho = icc_of(design)
    var = total * (rho + (1 - rho) / max(per_task, 1.0))
    at_pilot = design.psi - design.effect**2
    if per_task == design.per_task and not math.isnan(design.task_var) and at_pilot > 0:
        # at the pilot's own pairs per task, its task means' own variance (an ICC estimate clipped at 0
        # overstates it where the ICC is small), scaled with the pair variance to the effect planned
        var = design.task_var * total / at_pilot
    if design.pilot_df > 2:
        var *= design.pilot_df / (design.pilot_df - 2)
    return np.array([math.sqrt(max(var, 0.0))])


def _sign_flip_power(delta: float, sd: np.ndarray, tasks: int, alpha: float) -> float:
    """A sign flip of per-task means rejects where |sum| passes its null spread, which is the
    uncentered second moment, sd^2 + delta^2 per task (the randomization distribution, Lehmann &
    Romano 2005, Testing Statistical Hypotheses, 15.2); the mean itself spreads by sd / sqrt(tasks).
    Below floor_tasks the test cannot reject at all (power_at)."""
    crit = norm.isf(alpha / 2) * np.sqrt(sd**2 + delta**2)
    shift = abs(delta) * math.sqrt(tasks)
    return float(np.mean(norm.cdf((shift - crit) / sd) + norm.cdf((-shift - crit) / sd)))


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
        # a pilot that never disagreed says nothing of how its tasks' pairs go together: independent
        rho = icc_of(design) if design.psi > 0 else 0.0
        return _one_way_power(delta, units, per_task or design.per_task, alpha, rho)
    sd = _task_sd(design, delta, per_task or design.per_task)
    if not sd.any():
        return 1.0
    return _sign_flip_power(delta, np.maximum(sd, 1e-300), units, alpha)


def _one_way_power(delta: float, tasks: int, per_task: float, alpha: float, rho: float) -> float:
    """Every discordant pair one way (a pilot whose discordant pairs all went one way, or that saw
    none, planned at the least discordance an effect needs): each task's mean is 0 or of the effect's
    sign, and the sign flip's p is exactly 2 / 2^K for the K tasks not 0. It rejects when K >=
    floor_tasks' bound, K ~ Binomial(tasks, q), q the chance that a task's pairs are not all
    concordant: 1 - E(1 - r)^m for a task's rate r of mean |delta| and intraclass correlation rho (a
    beta-binomial's zero class; rho 0, independent pairs: 1 - (1 - |delta|)^m; rho 1, a task all one
    way or all concordant: |delta|). The normal approximation is far off here (10 points at 51 tasks),
    this is exact."""
    needed = math.ceil(1 - math.log2(alpha))
    m, r = max(1, round(per_task)), abs(delta)
    if rho <= 0 or r >= 1:
        q = 1 - (1 - r) ** m
    elif rho >= 1:
        q = r
    else:
        a, b = r * (1 / rho - 1), (1 - r) * (1 / rho - 1)
        q = 1 - math.exp(betaln(a, b + m) - betaln(a, b))
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
