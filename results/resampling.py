"""Bootstrap and sign-flip resampling whose memory does not grow with resamples x pairs.

Every draw comes from `np.random.default_rng(seed)`, so a report is reproducible to the digit.

How the draws are made (changed in issue 15; the numbers move only by Monte-Carlo noise):
- Bootstrap (`paired_bootstrap`, `cluster_bootstrap`). A resample of n units drawn with
  replacement is, in distribution, a multinomial draw of n over the distinct unit types with
  their observed shares. For paired binary outcomes the types are the four cells (both solved,
  neither, A only, B only; the first two share the difference 0), for model-call differences a
  handful of integers, for task clusters the distinct (sum, size) pairs. So when there are at
  most `MAX_TYPES` types, each replicate is one multinomial draw (memory n_boot x types).
  Otherwise, e.g. continuous differences, pair indices are drawn `chunk` elements at a time; that
  path gives exactly the replicates of a one-shot n_boot x n index matrix with the same seed.
- Sign flip (`sign_flip_p`). Flipping the sign of each difference at random is, in
  distribution, a Binomial(count, 1/2) number of positive signs per distinct |difference|. With
  at most `MAX_TYPES` magnitudes the null distribution is drawn that way; otherwise
  `scipy.stats.permutation_test` runs in batches (same numbers as unbatched). Small samples
  (2**n <= n_resamples) keep scipy's exact enumeration. The p-value is scipy's: two-sided,
  (count + 1) / (n_resamples + 1) for a random test (Phipson & Smyth), with ties taken within
  100 ulps of the statistic's scale.
Before issue 15 the bootstrap drew a full n_boot x n index matrix and the sign flip ran scipy
without `batch` (16.75 GB at 100,000 records); those draws differ from the ones above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
import pandas as pd
from scipy.stats import permutation_test
from scipy.stats import t as student_t

from results.stats import ALPHA

# differences (or cluster labels) as a list or a column's array
Diffs: TypeAlias = Sequence[float] | np.ndarray
Labels: TypeAlias = Sequence[object] | np.ndarray

N_BOOT = 10_000
SEED = 20260714
# distinct unit types up to which a resample is drawn as counts per type
MAX_TYPES = 256
# elements per resampling matrix on the chunked path (4M int64 = 32 MB)
CHUNK = 1 << 22
# tasks a clustered test needs to mean anything: a two-sided sign flip over k task clusters cannot
# give p below 2 / 2^k, which is above 0.05 for k < 6; nor is a bootstrap over so few clusters an
# interval. Below it the report says so (test "too_few_tasks") in place of a p and a CI
MIN_CLUSTERS = 6


def percentile_ci(replicates: np.ndarray, alpha: float = ALPHA) -> tuple[float, float]:
    if len(replicates) == 0:
        return (math.nan, math.nan)
    lo, hi = np.percentile(replicates, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(lo), float(hi)


def few_clusters_factor(k: int, alpha: float = ALPHA) -> float:
    """How much a percentile interval over k resampled clusters is widened: t_{k-1} / z sqrt(k / (k-1))."""
    if k < 2:
        return math.nan
    z = float(student_t.isf(alpha / 2, 1e9))
    return float(student_t.isf(alpha / 2, k - 1)) / z * math.sqrt(k / (k - 1))


def cluster_ci(replicates: np.ndarray, estimate: float, k: int, alpha: float = ALPHA) -> tuple[float, float]:
    """The percentile interval of a k-cluster bootstrap, each end moved away from the estimate by
    `few_clusters_factor` (module doc), so that it covers 1 - alpha with few clusters."""
    lo, hi = percentile_ci(replicates, alpha)
    if math.isnan(lo):
        return (lo, hi)
    f = few_clusters_factor(k, alpha)
    return estimate - f * (estimate - lo), estimate + f * (hi - estimate)


def _ratio_bootstrap(sums: np.ndarray, sizes: np.ndarray, n_boot: int, seed: int, chunk: int) -> np.ndarray:
    """Replicates of sum(sums[i]) / sum(sizes[i]) over n units i drawn with replacement."""
    n = sums.size
    rng = np.random.default_rng(seed)
    types, freq = np.unique(np.column_stack([sums, sizes]), axis=0, return_counts=True)
    if len(types) <= MAX_TYPES:
        draws = rng.multinomial(n, freq / n, size=n_boot)
        ratios: np.ndarray = (draws @ types[:, 0]) / (draws @ types[:, 1])  # numpy types `@` of these as Any
        return ratios
    out = np.empty(n_boot)
    rows = max(1, chunk // n)
    for start in range(0, n_boot, rows):
        stop = min(n_boot, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    return out


def paired_bootstrap(diffs: Diffs, n_boot: int = N_BOOT, seed: int = SEED, chunk: int = CHUNK) -> np.ndarray:
    """Bootstrap replicates of the mean paired difference (pairs resampled with replacement)."""
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        return np.array([])
    return _ratio_bootstrap(d, np.ones_like(d), n_boot, seed, chunk)


def cluster_bootstrap(
    diffs: Diffs, clusters: Labels, n_boot: int = N_BOOT, seed: int = SEED, chunk: int = CHUNK
) -> np.ndarray:
    """Replicates of the pooled mean difference when whole clusters (tasks) are resampled."""
    d = np.asarray(diffs, dtype=float)
    if d.size == 0:
        return np.array([])
    codes, _ = pd.factorize(clusters if isinstance(clusters, np.ndarray) else pd.Series(list(clusters)))
    sums = np.bincount(codes, weights=d)
    sizes = np.bincount(codes).astype(float)
    return _ratio_bootstrap(sums, sizes, n_boot, seed, chunk)


def sign_flip_p(diffs: Diffs, n_resamples: int = N_BOOT, seed: int = SEED, chunk: int = CHUNK) -> float:
    """Two-sided sign-flip permutation p for mean difference 0 (exact when 2**n <= n_resamples);
    NaN for fewer than two differences (one difference's two signs are no test; scipy refuses them)."""
    d = np.asarray(diffs, dtype=float)
    if d.size < 2:
        return math.nan
    if not np.any(d):
        return 1.0
    nonzero = d[d != 0]
    mags, inverse, counts = np.unique(np.abs(nonzero), return_inverse=True, return_counts=True)
    exact = 2 ** min(d.size, 63) <= n_resamples  # scipy then enumerates every sign pattern
    if not exact and len(mags) <= MAX_TYPES:
        less, greater = _flip_counts(d, nonzero, mags, inverse, counts, n_resamples, np.random.default_rng(seed))
        return _mc_p(less, greater, n_resamples)
    res = permutation_test(
        (d,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        batch=max(1, chunk // (2 * d.size)),
        alternative="two-sided",
        rng=np.random.default_rng(seed),
    )
    return float(res.pvalue)


def _flip_counts(
    d: np.ndarray,
    nonzero: np.ndarray,
    mags: np.ndarray,
    inverse: np.ndarray,
    counts: np.ndarray,
    draws: int,
    rng: np.random.Generator,
) -> tuple[int, int]:
    """Of `draws` sign patterns, how many give a mean at most, and at least, the observed one (ties
    within 100 ulps of the scale, as scipy takes them)."""
    positive = rng.binomial(counts, 0.5, size=(draws, len(mags)))
    # observed and null through one product, so equal sign patterns give bit-equal statistics
    signed = np.bincount(inverse, weights=np.sign(nonzero), minlength=len(mags))
    stats = np.vstack([signed, 2 * positive - counts]) @ mags / d.size
    gamma = np.finfo(float).eps * 100 * float(np.abs(d).mean())
    null, observed = stats[1:], stats[0]
    return int(np.count_nonzero(null <= observed + gamma)), int(np.count_nonzero(null >= observed - gamma))


def _mc_p(less: int, greater: int, draws: int) -> float:
    return float(np.clip(2 * (min(less, greater) + 1) / (draws + 1), 0.0, 1.0))


# a Monte Carlo p this many standard errors from alpha or nearer is drawn again with more draws
NEAR_SE = 3.0
MAX_DRAWS = 1_000_000


@dataclass(frozen=True)
class FlipP:
    """A sign flip's p with how it was found: `draws` 0 where exact (every sign pattern, or none
    to flip), else the Monte Carlo draws it rests on and its standard error."""

    p: float
    draws: int
    se: float


def sign_flip(
    diffs: Diffs, n_resamples: int = N_BOOT, seed: int = SEED, alpha: float = ALPHA, chunk: int = CHUNK
) -> FlipP:
    """`sign_flip_p` with its precision, drawing more where its p is within NEAR_SE standard errors
    of alpha (module doc): 10x the draws each round, up to MAX_DRAWS, the first round's draws kept."""
    d = np.asarray(diffs, dtype=float)
    if d.size < 2 or not np.any(d) or 2 ** min(d.size, 63) <= n_resamples:
        return FlipP(sign_flip_p(d, n_resamples, seed, chunk), 0, 0.0)
    nonzero = d[d != 0]
    mags, inverse, counts = np.unique(np.abs(nonzero), return_inverse=True, return_counts=True)
    if len(mags) > MAX_TYPES:
        p = sign_flip_p(d, n_resamples, seed, chunk)
        return FlipP(p, n_resamples, _se(p, n_resamples))
    less, greater = _flip_counts(d, nonzero, mags, inverse, counts, n_resamples, np.random.default_rng(seed))
    draws, rounds = n_resamples, 0
    p = _mc_p(less, greater, draws)
    while abs(p - alpha) < NEAR_SE * _se(p, draws) and draws < MAX_DRAWS:
        rounds += 1
        more = min(MAX_DRAWS, draws * 10) - draws
        rng = np.random.default_rng([seed, rounds])
        for start in range(0, more, max(1, chunk // len(mags))):
            step = min(more - start, max(1, chunk // len(mags)))
            extra = _flip_counts(d, nonzero, mags, inverse, counts, step, rng)
            less, greater = less + extra[0], greater + extra[1]
        draws += more
        p = _mc_p(less, greater, draws)
    return FlipP(p, draws, _se(p, draws))


def _se(p: float, draws: int) -> float:
    return math.sqrt(max(p * (1 - p), 0.0) / draws) if draws else 0.0
