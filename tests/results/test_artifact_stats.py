"""results.artifact_stats reproduces the artifact's own statistics (stats_golden.json) exactly."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest

from results.artifact_stats import (
    VARIANTS,
    analyse,
    bootstrap_ci,
    budget_lane,
    holm,
    mcnemar_exact,
    paired_values,
    primary,
    sampling_lane,
    sign_flip_p,
)
from results.errors import UsageError

GOLDEN = json.loads((Path(__file__).parents[1] / "data" / "paper-goldens" / "stats_golden.json").read_text())
IN, OUT = GOLDEN["inputs"], GOLDEN["outputs"]
OURS = {v: k for k, v in VARIANTS.items()}


def frame(model: str = "made-up", budget: int = 4, sample_seed: int = 0) -> pd.DataFrame:
    """The golden's made-up table as our records would hold it (task ids tw-<seed>)."""
    rows = []
    for variant, outcomes in IN["success"].items():
        for task, ok, calls in zip(IN["tasks_sorted"], outcomes, IN["num_leaf_calls"][variant], strict=True):
            rows.append(
                {
                    "model": model,
                    "condition": OURS[variant],
                    "task_id": task.replace("textworld-", "tw-"),
                    "success": bool(ok),
                    "model_calls": calls,
                    "budget": budget,
                    "sample_seed": sample_seed,
                    "prompt_tokens": 100 * calls,
                    "completion_tokens": 10 * calls,
                }
            )
    return pd.DataFrame(rows).sample(frac=1.0, random_state=3)  # record order must not matter


def test_the_rng_and_the_bootstrap_match_cpython_as_the_artifact_used_it():
    rng = random.Random(1)
    assert [rng.randrange(50) for _ in range(20)] == OUT["rng_first_20_randrange_50"]
    assert list(bootstrap_ci(IN["deltas_typed_minus_raw"])) == OUT["bootstrap_ci_deltas"]


def test_exact_mcnemar_examples():
    for key, p in OUT["mcnemar_exact_examples"].items():
        b, c = map(int, key.split(","))
        assert mcnemar_exact(b, c) == p, key


def test_holm_on_the_published_qwen_contrasts():
    # the four planned contrasts' discordant pairs in the published Qwen table (baseline-only,
    # treatment-only): SameNL-raw 0/21, TypedFields-raw 2/24, TypedFields-SameNL 3/4, TypedFields-LocObs 2/20
    ps = [mcnemar_exact(0, 21), mcnemar_exact(2, 24), mcnemar_exact(3, 4), mcnemar_exact(2, 20)]
    assert holm(ps) == OUT["holm_on_paper_qwen_p_values"] == OUT["holm_expected_from_paper_csv"]
    assert holm([0.01, 0.04, 0.03, 0.005]) == [0.03, 0.06, 0.06, 0.02]  # the running maximum lifts rank 3


def test_the_headline_contrast_from_lists():
    head = IN["headline_contrast"]
    base, treat = IN["success"][head["baseline"]], IN["success"][head["treatment"]]
    calls_b, calls_t = IN["num_leaf_calls"][head["baseline"]], IN["num_leaf_calls"][head["treatment"]]
    tasks = IN["tasks_sorted"]
    got = paired_values(
        {t: (bool(b), bool(x)) for t, b, x in zip(tasks, base, treat, strict=True)},
        {t: (b, x) for t, b, x in zip(tasks, calls_b, calls_t, strict=True)},
    )
    want = {k: v for k, v in OUT["headline_paired"].items() if k not in ("baseline", "treatment")}
    assert got == want


def test_the_planned_contrasts_with_holm_from_records():
    got = primary(frame())
    assert len(got) == 4
    for row, want in zip(got, OUT["planned_contrasts_with_holm"], strict=True):
        assert row["contrast"] == want["contrast"]
        assert (row["baseline_artifact"], row["treatment_artifact"]) == (want["baseline"], want["treatment"])
        for key, value in want.items():
            if key not in ("model", "contrast", "baseline", "treatment"):
                assert row[key] == value, (want["contrast"], key)
        assert row["unpaired_games"] == 0


def test_the_sampling_lane_sign_flip_and_cluster_ci():
    deltas = IN["sampling_cluster_deltas"]
    assert sign_flip_p(deltas) == OUT["sampling_cluster_sign_flip_p"]
    assert list(bootstrap_ci(deltas)) == OUT["sampling_cluster_bootstrap_ci"]


def test_lane_designs_and_holm_families():
    one = frame()
    # budget lane: raw vs allowed_json only, one test per budget, Holm over the budgets of a model
    lanes = pd.concat([one.assign(budget=b) for b in (2, 4, 6, 8)])
    tests = budget_lane(lanes)
    assert [(t["budget"], t["baseline"], t["treatment"]) for t in tests] == [
        (b, "raw", "allowed_json") for b in (2, 4, 6, 8)
    ]
    assert all(t["holm_p"] == min(1.0, 4 * t["p"]) for t in tests)  # four equal p values: each times 4
    # sampling lane: 3 contrasts over game clusters; identical repeats give the single-seed deltas
    sampled = pd.concat([one.assign(sample_seed=s) for s in (3101, 3102, 3103)])
    rows = sampling_lane(sampled)
    assert [r["contrast"] for r in rows] == ["structured_feedback", "full_interface", "typed_structure"]
    assert rows[1]["ci_low"] == OUT["headline_paired"]["ci_low"] and rows[1]["repeats_per_game"] == 3
    report = analyse(one, "primary")
    assert report["method"] == "artifact" and report["protocols"] == ["plan"]
    cost = {c["condition"]: c for c in report["cost"]}
    assert cost["raw"]["user_prompt_words"] is None and cost["raw"]["tokens"] == 110 * sum(
        IN["num_leaf_calls"]["generic+diagnostics"]
    )
    with pytest.raises(UsageError, match="allowed: primary, budget, sampling"):
        analyse(one, "nope")
    with pytest.raises(UsageError, match="absent from the records"):
        primary(one[one["condition"] != "loc_obs"])
