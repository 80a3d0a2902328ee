"""The noise floor of repeats: flips, the run-to-run spread, and the unpaired and paired thresholds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import fisher_exact
from scipy.stats import t as student_t

from results.contrasts import mcnemar_exact
from results.noise import noise_floor, paired_threshold, unpaired_threshold


def _records(solved: np.ndarray) -> pd.DataFrame:
    """solved[t, k]: task t's verdict at seed k, one model, one condition."""
    tasks, seeds = solved.shape
    return pd.DataFrame(
        {
            "model": "m",
            "suite": "s",
            "budget": 4,
            "condition": "raw",
            "task_id": [f"t{t}" for t in range(tasks) for _ in range(seeds)],
            "sample_seed": [k for _ in range(tasks) for k in range(seeds)],
            "fork": "",
            "success": solved.reshape(-1).astype(bool),
        }
    )


def test_a_deterministic_agent_flips_nothing_and_its_paired_threshold_is_six_tasks_one_way():
    solved = np.repeat((np.arange(200) % 2 == 0)[:, None], 5, axis=1)
    row = noise_floor(_records(solved)).iloc[0]
    assert (row.tasks, row.repeats, row.flip, row.disagree, row.spread) == (200, 5, 0.0, 0.0, 0.0)
    # 2 * 0.5**6 = 0.031 <= 0.05 < 2 * 0.5**5: six discordant pairs all one way, of 200
    assert row.paired == pytest.approx(6 / 200)
    assert row.unpaired > row.paired and row.gain == pytest.approx(row.unpaired / row.paired)


def test_a_known_model_of_repeats_gives_its_flip_rate_and_spread():
    rng = np.random.default_rng(5)
    p = rng.choice([0.0, 0.5, 1.0], size=400, p=[0.4, 0.2, 0.4])  # a fifth of the tasks are coin flips
    solved = rng.random((400, 8)) < p[:, None]
    row = noise_floor(_records(solved)).iloc[0]
    assert row.flip == pytest.approx(0.2 * (1 - 2 * 0.5**8), abs=0.04)
    assert row.disagree == pytest.approx(0.2 * 0.5, abs=0.02)  # two repeats of a coin flip disagree half the time
    # each run's rate: 400 tasks, of which 80 are coin flips: SD sqrt(80 * 0.25) / 400 = 0.011
    assert row.spread == pytest.approx(np.sqrt(80 * 0.25) / 400, rel=0.4)
    assert row.paired < row.unpaired  # what pairing buys on tasks this unequal


def test_the_thresholds_are_the_first_gaps_their_exact_tests_call_real():
    n, rate = 120, 0.4
    gap = round(unpaired_threshold(n, rate) * n)
    first = [[48, 72], [48 + gap, 72 - gap]]
    before = [[48, 72], [48 + gap - 1, 72 - gap + 1]]
    assert fisher_exact(first)[1] <= 0.05 < fisher_exact(before)[1]
    extra = round(paired_threshold(n, 0.1) * n)  # 12 noise pairs split 6/6, plus `extra` one way
    assert mcnemar_exact(6 + extra, 6) <= 0.05 < mcnemar_exact(6 + extra - 1, 6)


def test_no_repeats_no_rows():
    assert noise_floor(_records(np.ones((10, 1), dtype=bool))).empty


def test_the_two_runs_gap_takes_the_t_quantile_of_the_runs_it_rests_on():
    """Issue 64: a normal z with an SD from 8 runs made a gap repetition exceeded 9% of the time;
    Student's t with runs - 1 degrees of freedom makes it 5% (benchmarks/calibration.py measures it)."""
    rng = np.random.default_rng(3)
    for runs in (3, 5, 8):
        row = noise_floor(_records(rng.random((60, runs)) < 0.5)).iloc[0]
        assert row.runs == runs
        assert row["repeat"] == pytest.approx(student_t.isf(0.025, runs - 1) * np.sqrt(2) * row.spread)
    # the quantile falls to z's as runs grow
    assert student_t.isf(0.025, 7) / 1.96 == pytest.approx(1.207, abs=1e-3)
