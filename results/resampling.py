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
from typing import TypeAlias

import numpy as np
import pandas as pd
from scipy.stats import permutation_test

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


def _two_sided_p(null: np.ndarray, observed: float, scale: float, exact: bool) -> float:
    """scipy.stats.permutation_test's two-sided p-value for a null sample and the observed value."""
    adjustment = 0 if exact else 1
    gamma = np.finfo(float).eps * 100 * scale
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / (null.size + adjustment)
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / (null.size + adjustment)
    return float(np.clip(2 * min(less, greater), 0.0, 1.0))


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
        positive = np.random.default_rng(seed).binomial(counts, 0.5, size=(n_resamples, len(mags)))
        # observed and null through one product, so equal sign patterns give bit-equal statistics
        signed = np.bincount(inverse, weights=np.sign(nonzero), minlength=len(mags))
        stats = np.vstack([signed, 2 * positive - counts]) @ mags / d.size
        return _two_sided_p(stats[1:], stats[0], float(np.abs(d).mean()), exact=False)
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
