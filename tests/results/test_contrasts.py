"""Paired contrasts: McNemar, Holm, bootstraps and the sign-flip test against hand computation."""

from __future__ import annotations

import json
import math
from math import comb
from pathlib import Path

import numpy as np
import pytest

from results import UsageError, contrasts, load, pair, parse_contrasts
from results.contrasts import holm, mcnemar_exact
from results.paper import PLANNED_CONTRASTS
from results.report import render_report
from results.resampling import cluster_bootstrap, paired_bootstrap, percentile_ci, sign_flip_p


def binom_two_sided(b: int, c: int) -> float:
    n, k = b + c, min(b, c)
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2**n)


@pytest.mark.parametrize(
    ("b", "c", "p"), [(1, 8, 20 / 512), (0, 5, 2 / 32), (3, 3, 1.0), (0, 0, 1.0), (6, 1, 16 / 128)]
)
def test_mcnemar_exact_by_hand(b: int, c: int, p: float) -> None:
    assert mcnemar_exact(b, c) == pytest.approx(p)
    assert mcnemar_exact(b, c) == pytest.approx(binom_two_sided(b, c))
    assert mcnemar_exact(c, b) == mcnemar_exact(b, c)


def test_holm_by_hand() -> None:
    # sorted 0.005*4, 0.01*3, 0.03*2, 0.04*1 -> monotone: 0.02, 0.03, 0.06, 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    out = holm([0.01, float("nan"), 0.04])  # a contrast with no pairs is not in the family
    assert np.isnan(out[1]) and out[[0, 2]].tolist() == pytest.approx([0.02, 0.04])


def test_paired_bootstrap_two_pairs() -> None:
    # resampling d=[1, 0]: mean is 0, 1/2, 1 with probabilities 1/4, 1/2, 1/4
    reps = paired_bootstrap([1, 0], n_boot=10_000, seed=7)
    assert len(reps) == 10_000
    assert set(np.unique(reps)) == {0.0, 0.5, 1.0}
    assert np.mean(reps == 0.5) == pytest.approx(0.5, abs=0.02)
    assert percentile_ci(reps) == (0.0, 1.0)
    assert np.array_equal(reps, paired_bootstrap([1, 0], n_boot=10_000, seed=7))  # fixed seed
    assert percentile_ci(paired_bootstrap([1, 1, 1])) == (1.0, 1.0)


def test_cluster_bootstrap_resamples_whole_tasks() -> None:
    d = [1, 1, 1, 0, 0, 0]
    tasks = ["a", "a", "a", "b", "b", "b"]
    reps = cluster_bootstrap(d, tasks, seed=3)
    assert set(np.unique(reps)) == {0.0, 0.5, 1.0}
    assert percentile_ci(reps) == (0.0, 1.0)
    # treating the six pairs as independent would understate the uncertainty
    assert percentile_ci(paired_bootstrap(d, seed=3))[0] > 0
    # with one pair per task the two bootstraps coincide draw for draw
    assert np.allclose(cluster_bootstrap([1, 0, 1, 1], list("wxyz"), seed=5), paired_bootstrap([1, 0, 1, 1], seed=5))


def test_sign_flip_exact_by_hand() -> None:
    # of the 2^4 sign patterns only all-plus and all-minus reach |mean| >= 1
    assert sign_flip_p([1, 1, 1, 1]) == pytest.approx(2 / 16)
    assert sign_flip_p([1, 1, 1, 1, 1, 1]) == pytest.approx(2 / 64)
    assert sign_flip_p([0, 0, 0]) == 1.0
    # d = [2, 1]: patterns with |mean| >= 1.5 are (+,+) and (-,-)
    assert sign_flip_p([2, 1]) == pytest.approx(0.5)


def test_planned_contrasts_on_the_fixture(paper_run: Path) -> None:
    table = contrasts(load(paper_run), list(PLANNED_CONTRASTS)).table.set_index("contrast")
    # discordant counts from the fixture's solved sets (see conftest.QWEN_SOLVED)
    expected = {
        "allowed_prose-raw": (5, 1, 14 / 64),
        "allowed_json-raw": (6, 1, 16 / 128),
        "allowed_json-allowed_prose": (1, 0, 1.0),
        "allowed_json-loc_obs": (5, 0, 2 / 32),
    }
    for name, (a_only, b_only, p) in expected.items():
        row = table.loc[name]
        assert (row["a_only"], row["b_only"], row["n_pairs"]) == (a_only, b_only, 10)
        assert row["diff"] == pytest.approx((a_only - b_only) / 10)
        assert row["p_value"] == pytest.approx(p)
        assert row["test"] == "mcnemar_exact" and row["lane"] == "paired"
        assert row["ci_low"] <= row["diff"] <= row["ci_high"]
    # Holm over the four: 0.0625*4, 0.125*3, 0.21875*2, 1*1
    assert table["p_holm"].to_dict() == pytest.approx(
        {
            "allowed_prose-raw": 0.4375,
            "allowed_json-raw": 0.375,
            "allowed_json-allowed_prose": 1.0,
            "allowed_json-loc_obs": 0.25,
        }
    )
    # calls: allowed_json uses 2 calls where raw used 4 on tasks 3..8 and 4 vs 2 on task 9
    row = table.loc["allowed_json-raw"]
    assert row["calls_diff"] == pytest.approx((6 * -2 + 2) / 10)
    assert row["calls_ci_low"] <= row["calls_diff"] <= row["calls_ci_high"]
    assert 0 < row["calls_p"] <= row["calls_p_holm"] <= 1


def test_same_seed_same_numbers(paper_run: Path) -> None:
    df = load(paper_run)
    one = contrasts(df, [("allowed_json", "raw")]).table
    two = contrasts(df, [("allowed_json", "raw")]).table
    assert one.equals(two)


def test_unpaired_rows_are_reported(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, "raw", t == 0) for t in range(5)]
    recs += [kit.make(t, "allowed_json", True) for t in range(3)]  # tasks 3, 4 missing
    recs += [kit.make(0, "raw", None, model="m2"), kit.make(0, "allowed_json", True, model="m2")]
    df = load(kit.write(tmp_path / "u", recs))
    res = contrasts(df, [("allowed_json", "raw")])
    row = res.table.set_index("model").loc[kit.QWEN]
    assert (row["n_pairs"], row["n_unpaired"], row["a_only"], row["b_only"]) == (3, 2, 2, 0)
    lost = res.unpaired
    assert sorted(zip(lost["task_id"], lost["status_a"], lost["status_b"], strict=True)) == [
        ("g0", "ok", "harness_error"),
        ("g3", "missing", "ok"),
        ("g4", "missing", "ok"),
    ]
    m2 = res.table.set_index("model").loc["m2"]
    assert m2["n_pairs"] == 0 and np.isnan(m2["p_value"])
    paired, unpaired = pair(df, "allowed_json", "raw")
    assert len(paired) == 3 and len(unpaired) == 3


def test_sampling_lane_uses_task_clusters(kit, tmp_path: Path) -> None:
    seeds = (3101, 3102, 3103)
    recs = []
    for t in range(6):
        for s in seeds:
            recs.append(kit.make(t, "allowed_json", True, sample_seed=s))
            recs.append(kit.make(t, "raw", t >= 4 or s == 3101 and t == 0, sample_seed=s))
    row = contrasts(load(kit.write(tmp_path / "s", recs)), [("allowed_json", "raw")]).table.iloc[0]
    assert (row["lane"], row["test"], row["n_pairs"], row["n_tasks"]) == ("sampling", "sign_flip", 18, 6)
    # per-task differences 2/3, 1, 1, 1, 0, 0: of the 64 sign patterns, |mean| >= 11/18 needs the four
    # non-zero ones all plus or all minus (x4 for the zeros' signs): 8 patterns
    assert row["p_value"] == pytest.approx(8 / 64)
    assert row["diff"] == pytest.approx(11 / 18)


def test_too_few_tasks_for_a_clustered_test_say_so_in_place_of_a_p_and_an_interval(kit, tmp_path: Path) -> None:
    # 5 tasks of 3 seeds each: a sign flip over 5 clusters cannot go below p = 2/32 > 0.05
    recs = []
    for t in range(5):
        for s in (3101, 3102, 3103):
            recs.append(kit.make(t, "allowed_json", True, sample_seed=s))
            recs.append(kit.make(t, "raw", False, sample_seed=s))
    row = contrasts(load(kit.write(tmp_path / "s", recs)), [("allowed_json", "raw")]).table.iloc[0]
    assert (row["test"], row["n_tasks"], row["diff"]) == ("too_few_tasks", 5, 1.0)
    assert math.isnan(row["p_value"]) and math.isnan(row["ci_low"]) and math.isnan(row["ci_high"])


def test_parse_contrasts() -> None:
    present = {"raw", "allowed_json", "loc_obs", "self-check"}
    assert parse_contrasts("allowed_json-raw, loc_obs-raw", present) == [("allowed_json", "raw"), ("loc_obs", "raw")]
    assert parse_contrasts(["self-check-raw"], present) == [("self-check", "raw")]
    with pytest.raises(UsageError, match="condition 'allowed_prose' absent.*present: allowed_json, loc_obs"):
        parse_contrasts("allowed_prose-raw", present)
    with pytest.raises(UsageError, match="itself"):
        parse_contrasts("raw-raw", present)
    with pytest.raises(UsageError, match="no contrast"):
        parse_contrasts(" , ", present)


def test_a_monte_carlo_p_says_so_in_the_json_and_the_text(kit, tmp_path: Path) -> None:
    """20 tasks x 3 seeds: 2^20 sign patterns are not enumerated; the p is drawn, and the report's
    JSON gives its draws and standard error, its table a ± and its null line the same."""
    recs = []
    for t in range(20):
        for s in (3101, 3102, 3103):
            recs.append(kit.make(t, "allowed_json", t % 3 == 0 or s == 3101, sample_seed=s))
            recs.append(kit.make(t, "raw", t % 4 == 0 or s == 3102, sample_seed=s))
    df = load(kit.write(tmp_path / "mc", recs))
    row = json.loads(render_report(df, contrasts="allowed_json-raw", fmt="json"))["contrasts"][0]
    assert row["test"] == "sign_flip" and row["p_draws"] >= 10_000
    assert row["p_se"] == pytest.approx(math.sqrt(row["p_value"] * (1 - row["p_value"]) / row["p_draws"]), rel=1e-3)
    text = " ".join(render_report(df, contrasts="allowed_json-raw", width=200).split())  # notes wrap
    assert f"±{row['p_se']:.4f}" in text and "Monte Carlo p and its standard error" in text
    assert f"its p a Monte Carlo estimate, ±{row['p_se']:.4f} over {row['p_draws']:,} draws" in text
    # McNemar's p is exact: no draws
    one = [r for r in recs if r["sample_seed"] == 3101]
    exact = json.loads(render_report(load(kit.write(tmp_path / "one", one)), "allowed_json-raw", fmt="json"))
    assert exact["contrasts"][0]["p_draws"] == 0
