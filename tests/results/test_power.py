"""The power of the report's own tests: exact where it can be, and checked against drawn studies."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from results import power
from results.contrasts import mcnemar_exact
from results.power import Design, design_of, mde, per_task_for, power_at, size_for
from results.power_sim import simulate

PAIRED = Design(clustered=False, n_tasks=200, n_pairs=200, psi=0.2, between=0.0, effect=0.05)
CLUSTERED = Design(clustered=True, n_tasks=40, n_pairs=200, psi=0.3, between=0.02, effect=0.0)
# a pilot whose arms never disagreed (a player that fails everything): planned one way
ONE_WAY = Design(clustered=True, n_tasks=200, n_pairs=1000, psi=0.0, between=0.0, effect=0.0)
DESIGNS = pytest.mark.parametrize(
    "design", [PAIRED, CLUSTERED, ONE_WAY], ids=["one pair per task", "five seeds per task", "never discordant"]
)


def test_the_mcnemar_power_is_the_exact_sum_over_every_outcome():
    """Brute force over every (a_only, b_only, concordant) count of 14 pairs, each tested by the
    report's own exact McNemar: the computed power is that sum to the digit."""
    n, p10, p01 = 14, 0.2, 0.05
    total = 0.0
    for a, b in itertools.product(range(n + 1), repeat=2):
        if a + b > n:
            continue
        prob = math.comb(n, a) * math.comb(n - a, b) * p10**a * p01**b * (1 - p10 - p01) ** (n - a - b)
        total += prob * (mcnemar_exact(a, b) <= 0.05)
    design = Design(False, n, n, psi=p10 + p01, between=0.0, effect=p10 - p01)
    assert power_at(design, n, p10 - p01, 0.05) == pytest.approx(total, abs=1e-12)


@DESIGNS
@pytest.mark.parametrize("alpha", [0.05, 0.0125], ids=["alone", "Holm of 4"])
def test_1000_studies_drawn_at_the_size_found_reach_the_stated_power_within_3_points(design, alpha):
    n = size_for(design, 0.05, alpha, 0.8)
    stated = power_at(design, n, 0.05, alpha)
    assert 0.8 <= stated < 0.83
    # the size is the first that reaches it: one fewer falls short (the paired power is a sawtooth in n)
    assert power_at(design, n - 1, 0.05, alpha) < 0.8
    drawn = simulate(design, n, 0.05, alpha, studies=1000, seed=3)
    assert abs(drawn - stated) <= 0.03, (n, stated, drawn)


@pytest.mark.parametrize("design", [PAIRED, CLUSTERED], ids=["one pair per task", "five seeds per task"])
def test_the_mde_shrinks_as_one_over_the_root_of_the_size(design):
    sizes = [400, 1600, 6400]
    found = [mde(design, n, 0.05, 0.8) for n in sizes]
    for small, large in itertools.pairwise(found):
        assert large / small == pytest.approx(0.5, abs=0.02)
    # and the MDE is where the power reaches 80%
    assert power_at(design, 400, found[0], 0.05) == pytest.approx(0.8, abs=1e-3)


def test_a_design_is_read_from_the_pairs_discordance_and_the_tasks_spread():
    # task 0: +1 on both of its pairs, task 1: 0 and 0, task 2: -1 and +1
    sa = np.array([1, 1, 0, 1, 0, 1], dtype=bool)
    sb = np.array([0, 0, 0, 1, 1, 0], dtype=bool)
    design = design_of(sa, sb, np.array([0, 0, 1, 1, 2, 2]))
    assert design.clustered and design.n_tasks == 3 and design.per_task == 2
    assert design.psi == pytest.approx(4 / 6) and design.effect == pytest.approx(2 / 6)
    # one-way ANOVA: task means 1, 0, 0 (grand 1/3); MSB = 2 * (4/9 + 1/9 + 1/9) / 2 = 2/3; MSW = 2 / 3
    assert design.between == pytest.approx(0.0)
    alone = design_of(sa, sb, np.arange(6))
    assert not alone.clustered and alone.units == 6


def test_too_few_tasks_have_no_power_and_more_seeds_cannot_mend_a_spread_between_tasks():
    assert power_at(CLUSTERED, 5, 0.5, 0.05) == 0.0  # a sign flip of 5 tasks cannot reach p 0.05
    # every pair solved by a and failed by b: no spread at all, and still the floor of tasks
    assert size_for(CLUSTERED, 1.0, 0.05, 0.8) == power.floor_tasks(0.05) == 6
    assert power.floor_tasks(0.05 / 4) == 8  # Holm over four: 2 / 2^7 > 0.0125
    # 40 tasks whose effects spread by sqrt(0.02): no number of seeds per task detects 2 points
    assert per_task_for(CLUSTERED, 0.02, 0.05, 0.8) is None
    assert per_task_for(CLUSTERED, 0.10, 0.05, 0.8) == pytest.approx(12)
    assert per_task_for(PAIRED, 0.10, 0.05, 0.8) is None  # one pair per task: no seeds to add


def test_an_effect_no_size_reaches_has_no_size():
    never = Design(False, 10, 10, psi=1.0, between=0.0, effect=0.0)
    assert size_for(never, 0.0, 0.05, 0.8) is None
    assert math.isnan(mde(never, 3, 0.05, 0.8))  # three pairs detect nothing at 0.05
