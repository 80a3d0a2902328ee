"""Per-cell statistics checked against hand computation."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from results import RecordsError, UsageError, failure_taxonomy, funnel, load, summary, wilson

Z = 1.959963984540054  # two-sided 95% normal quantile


def wilson_by_hand(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return centre - half, centre + half


def test_wilson_14_of_50() -> None:
    lo, hi = wilson(14, 50)
    assert (lo, hi) == pytest.approx(wilson_by_hand(14, 50), abs=1e-12)
    assert round(lo, 4) == 0.1747 and round(hi, 4) == 0.4167


@pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (36, 50), (1, 3)])
def test_wilson_edges(k: int, n: int) -> None:
    assert wilson(k, n) == pytest.approx(wilson_by_hand(k, n), abs=1e-12)


def test_wilson_without_episodes_is_nan() -> None:
    assert all(math.isnan(x) for x in wilson(0, 0))


def test_summary_cells(paper_run: Path) -> None:
    cells = summary(load(paper_run))
    assert cells["condition"].tolist() == ["raw", "loc_obs", "allowed_prose", "allowed_json"]
    row = cells.set_index("condition").loc["allowed_json"]
    assert (row["solved"], row["n"], row["harness_errors"]) == (9, 10, 0)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_by_hand(9, 10))
    # 2 tasks won on call 1, 7 won on call 2, 1 lost after 4 calls
    assert row["model_calls_total"] == 2 * 1 + 7 * 2 + 4
    assert row["model_calls_mean"] == pytest.approx(2.0)
    tokens = 120 * 20  # 100 prompt + 20 completion per call
    assert row["total_tokens"] == tokens
    assert row["tokens_per_success"] == pytest.approx(tokens / 9)
    assert row["words_per_success"] == pytest.approx(70 * 20 / 9)
    assert row["first_call_valid_rate"] == pytest.approx(0.2)
    assert (row["repaired"], row["repaired_rate"]) == (7, pytest.approx(0.7))


def test_harness_errors_are_counted_and_excluded(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, "raw", t < 3) for t in range(8)] + [kit.make(8, "raw", None), kit.make(9, "raw", None)]
    row = summary(load(kit.write(tmp_path / "r", recs))).iloc[0]
    assert (row["episodes"], row["harness_errors"], row["n"], row["solved"]) == (10, 2, 8, 3)
    assert row["rate"] == pytest.approx(3 / 8)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(wilson_by_hand(3, 8))
    # the errors' zero calls do not pull the mean down
    assert row["model_calls_mean"] == pytest.approx((3 * 1 + 5 * 4) / 8)


def test_by_budget_and_auto_split(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, "raw", t < b // 2, budget=b) for b in (2, 4) for t in range(4)]
    df = load(kit.write(tmp_path / "b", recs))
    cells = summary(df)  # several budgets: split without being asked
    assert cells[["budget", "solved", "n"]].values.tolist() == [[2, 1, 4], [4, 2, 4]]
    assert summary(df, by=["budget"]).equals(cells)
    with pytest.raises(UsageError, match="unknown --by column 'nope'"):
        summary(df, by=["nope"])


def test_failure_taxonomy(kit, tmp_path: Path) -> None:
    recs = [
        kit.make(0, "raw", False, final_failure="unparseable_plan"),
        kit.make(1, "raw", False),
        kit.make(2, "raw", False),
        kit.make(3, "raw", True),
        kit.make(4, "raw", None),
    ]
    tax = failure_taxonomy(load(kit.write(tmp_path / "f", recs)))
    assert tax[["final_failure", "count"]].values.tolist() == [["invalid_action", 2], ["unparseable_plan", 1]]
    assert tax["share"].tolist() == pytest.approx([2 / 3, 1 / 3])


def test_funnel(paper_run: Path) -> None:
    f = funnel(load(paper_run)).set_index("condition")
    row = f.loc["raw", ["n", "first_call_valid", "repaired", "solved"]]
    assert isinstance(row, pd.Series) and row.tolist() == [10, 2, 2, 4]  # one row per condition


def test_records_error_is_a_value_error() -> None:
    assert issubclass(RecordsError, ValueError) and issubclass(UsageError, ValueError)
