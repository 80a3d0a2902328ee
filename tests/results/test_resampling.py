"""results.resampling: the count-based draws match index resampling in distribution, the chunked
paths give exactly the one-shot draws, and the sign-flip p matches the exact null."""

from __future__ import annotations

import gc
import math
from collections import Counter
from math import comb

import numpy as np
import pytest
from scipy.stats import binom, permutation_test

from results.contrasts import holm
from results.resampling import (
    MAX_DRAWS,
    MAX_TYPES,
    FlipP,
    cluster_bootstrap,
    cluster_ci,
    few_clusters_factor,
    paired_bootstrap,
    percentile_ci,
    sign_flip,
    sign_flip_p,
)


def one_shot_bootstrap(d: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """The draws as they were made before issue 15: one n_boot x n index matrix."""
    idx = np.random.default_rng(seed).integers(0, d.size, size=(n_boot, d.size))
    return d[idx].mean(axis=1)


def test_binary_pairs_are_drawn_by_cell_counts_with_the_bootstrap_distribution() -> None:
    # 30 pairs: A only 12, B only 5, both or neither 13 -> differences +1 / -1 / 0
    d = np.array([1.0] * 12 + [-1.0] * 5 + [0.0] * 13)
    reps = paired_bootstrap(d, n_boot=40_000, seed=11)
    # the mean of n draws with replacement: expectation mean(d), variance var(d) / n
    assert reps.mean() == pytest.approx(d.mean(), abs=4 * np.sqrt(d.var() / d.size / 40_000))
    assert reps.var() == pytest.approx(d.var() / d.size, rel=0.03)
    # every replicate is a count of +1s minus a count of -1s over 30
    assert np.allclose(reps * 30, np.round(reps * 30))
    old = one_shot_bootstrap(d, 40_000, 11)
    assert np.percentile(reps, [2.5, 50, 97.5]) == pytest.approx(np.percentile(old, [2.5, 50, 97.5]), abs=1 / 30)
    assert np.array_equal(reps, paired_bootstrap(d, n_boot=40_000, seed=11))  # fixed seed
    assert not np.array_equal(reps, paired_bootstrap(d, n_boot=40_000, seed=12))


def test_many_distinct_values_are_drawn_in_chunks_exactly_as_in_one_shot() -> None:
    d = np.random.default_rng(0).normal(size=MAX_TYPES + 50)
    old = one_shot_bootstrap(d, 1_000, 5)
    for chunk in (1, 1_000, 10**6):  # one replicate per chunk, a few, all at once
        assert np.allclose(paired_bootstrap(d, n_boot=1_000, seed=5, chunk=chunk), old, rtol=0, atol=1e-12)


def test_cluster_bootstrap_by_cluster_types_matches_resampling_whole_clusters() -> None:
    # 40 tasks x 3 seeds with per-task sums in {-3..3}: 7 cluster types
    rng = np.random.default_rng(1)
    d = rng.choice([-1.0, 0.0, 1.0], size=120, p=[0.2, 0.5, 0.3])
    tasks = np.repeat(np.arange(40), 3)
    reps = cluster_bootstrap(d, tasks, n_boot=40_000, seed=2)
    sums = np.bincount(tasks, weights=d)
    by_index = one_shot_bootstrap(sums, 40_000, 2) / 3  # equal cluster sizes: mean of task means
    assert reps.mean() == pytest.approx(by_index.mean(), abs=0.005)
    assert reps.std() == pytest.approx(by_index.std(), rel=0.03)
    # clusters of unequal size: the pooled mean, sum of sums over sum of sizes
    sizes = [1, 2, 3, 4]
    d2 = np.concatenate([np.full(s, float(s % 2)) for s in sizes])
    reps2 = cluster_bootstrap(d2, np.repeat(np.arange(4), sizes), n_boot=20_000, seed=3)
    assert set(np.round(reps2, 9)) <= {np.round(k / m, 9) for k in range(11) for m in range(1, 17)}
    assert reps2.min() == 0.0 and reps2.max() == 1.0


def exact_sign_flip_p(d: np.ndarray) -> float:
    """P(|T| >= |observed|) under random signs, by convolving the per-magnitude binomials (d in k/12)."""
    ticks = Counter(int(round(abs(x) * 12)) for x in d if x)
    null = Counter({0: 1})
    for tick, count in ticks.items():
        step: Counter[int] = Counter()
        for total, ways in null.items():
            for plus in range(count + 1):
                step[total + tick * (2 * plus - count)] += ways * comb(count, plus)
        null = step
    observed = abs(int(round(d.sum() * 12)))
    return sum(w for t, w in null.items() if abs(t) >= observed) / sum(null.values())


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sign_flip_by_binomial_counts_matches_the_exact_null(seed: int) -> None:
    # per-task mean differences of a 3-seed lane: multiples of 1/3 (and some halves)
    rng = np.random.default_rng(seed)
    d = rng.choice([-1, -2 / 3, -1 / 3, 0, 1 / 3, 2 / 3, 1, 0.5], size=60, p=[0.1, 0.1, 0.1, 0.2, 0.15, 0.15, 0.1, 0.1])
    exact = exact_sign_flip_p(d)
    p = sign_flip_p(d, n_resamples=20_000, seed=seed)
    assert p == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4)
    # scipy's test on the same data agrees within Monte-Carlo noise as well
    res = permutation_test(
        (d,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=20_000,
        rng=np.random.default_rng(seed),
    )
    assert p == pytest.approx(res.pvalue, abs=8 * np.sqrt(exact * (1 - exact) / 20_000) + 1e-4)


def test_sign_flip_extremes_and_ties() -> None:
    # all 50 differences +1: no random pattern reaches the observed mean, p = 2 (0 + 1) / (10,000 + 1)
    assert sign_flip_p(np.ones(50)) == pytest.approx(2 / 10_001)
    # balanced signs: the observed mean 0 is the centre of the null, p = 1
    assert sign_flip_p(np.array([1.0, -1.0] * 20)) == 1.0
    # thirds summing to exactly zero through different counts (2 x 1/3 = 2/3) still tie at 0
    assert sign_flip_p(np.array([1 / 3, 1 / 3, -2 / 3] * 10)) == 1.0
    assert sign_flip_p(np.ones(30), seed=4) == sign_flip_p(np.ones(30), seed=4)


def test_sign_flip_with_many_magnitudes_is_scipy_in_batches() -> None:
    d = np.random.default_rng(7).normal(0.1, 1, size=MAX_TYPES + 100)
    unbatched = permutation_test(
        (d,),
        lambda x, axis: np.mean(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=2_000,
        rng=np.random.default_rng(9),
    ).pvalue
    for chunk in (2 * d.size, 10**7):  # one resample per batch, all at once
        assert sign_flip_p(d, n_resamples=2_000, seed=9, chunk=chunk) == pytest.approx(unbatched, abs=0)


def test_small_samples_stay_exact() -> None:
    # 2**13 <= 10,000: every sign pattern is enumerated, as before
    d = np.array([1.0] * 13)
    assert sign_flip_p(d) == pytest.approx(2 / 2**13)


def test_holm_leaves_the_collector_as_it_found_it() -> None:
    assert gc.get_freeze_count() == 0
    holm([0.01, 0.02])
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        holm([0.01, 0.02])
        assert gc.get_freeze_count() == frozen  # someone else's frozen objects stay frozen
    finally:
        gc.unfreeze()


def test_resampling_draws_are_bounded_by_chunk_not_by_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The largest array drawn is n_boot x types or chunk elements, never n_boot x pairs."""
    shapes: list[tuple[int, ...]] = []
    real = np.random.default_rng

    class Spy:
        def __init__(self, seed: int) -> None:
            self.rng = real(seed)

        def __getattr__(self, name: str):
            method = getattr(self.rng, name)

            def call(*args, **kwargs):
                out = method(*args, **kwargs)
                shapes.append(np.shape(out))
                return out

            return call

    binary = np.random.default_rng(0).choice([-1.0, 0.0, 1.0], size=50_000)
    continuous = np.random.default_rng(0).normal(size=5_000)
    monkeypatch.setattr("results.resampling.np.random.default_rng", Spy)
    paired_bootstrap(binary)
    sign_flip_p(binary)
    assert max(int(np.prod(s)) for s in shapes) <= 10_000 * 3  # n_boot x the three difference values
    shapes.clear()
    paired_bootstrap(continuous, chunk=100_000)
    assert shapes and max(int(np.prod(s)) for s in shapes) <= 100_000


def test_a_monte_carlo_p_carries_its_draws_and_error_and_draws_more_near_alpha():
    far = sign_flip(np.r_[np.ones(30), -np.ones(10)] / 3, seed=1)
    assert far.draws == 10_000 and far.p == sign_flip_p(np.r_[np.ones(30), -np.ones(10)] / 3, seed=1)
    assert far.se == pytest.approx(math.sqrt(far.p * (1 - far.p) / 10_000))
    # 60 tasks whose p is about 0.05: 10,000 draws leave it within 3 SE of alpha, so more are drawn
    near = np.r_[np.ones(38), -np.ones(22), np.zeros(10)]
    first = sign_flip_p(near, seed=2)
    assert abs(first - 0.05) < 3 * math.sqrt(first * (1 - first) / 10_000)
    found = sign_flip(near, seed=2)
    assert found.draws > 10_000 and (abs(found.p - 0.05) >= 3 * found.se or found.draws == MAX_DRAWS)
    exact = binom.cdf(22, 60, 0.5) * 2  # the sign flip of +-1's is a sign test
    assert found.p == pytest.approx(exact, abs=4 * found.se)
    # enumerated: no draws, no error
    assert sign_flip(np.ones(10)) == FlipP(2 / 2**10, 0, 0.0)


def test_the_clustered_interval_widens_the_percentile_one_for_few_clusters():
    assert few_clusters_factor(24) == pytest.approx(2.0687 / 1.96 * math.sqrt(24 / 23), abs=1e-3)
    assert few_clusters_factor(10_000) == pytest.approx(1.0, abs=1e-3)
    reps = np.array([-0.1, 0.0, 0.1, 0.2, 0.3] * 20)
    lo, hi = cluster_ci(reps, 0.1, 24)
    plain = percentile_ci(reps)
    assert lo < plain[0] and hi > plain[1] and (0.1 - lo) / (0.1 - plain[0]) == pytest.approx(few_clusters_factor(24))


def test_the_clustered_interval_covers_its_nominal_95_percent_with_24_tasks():
    """1,000 studies of 24 tasks x 8 seeds, tasks' rates spread (a between-task variance): the
    widened interval holds the truth 95% of the time within 2 points (the plain percentile, about 93%)."""
    rng = np.random.default_rng(4)
    covered = 0
    for i in range(1000):
        p = rng.beta(0.6, 0.6, 24)
        d = (rng.random((24, 8)) < p[:, None]).astype(float) - 0.5
        est = d.mean()
        reps = cluster_bootstrap(d.ravel(), np.repeat(np.arange(24), 8), n_boot=2_000, seed=i)
        lo, hi = cluster_ci(reps, est, 24)
        covered += lo <= 0 <= hi
    assert 0.93 <= covered / 1000 <= 0.97, covered
