"""Which part of the feedback does the work (results.factors), and two spellings as one condition
(results.spellings), on synthetic records whose effects are known by construction."""

from __future__ import annotations

import json
from typing import Any

from results import load, render_report
from results.factors import factor_effects
from results.spellings import merge_spellings
from tests.results.conftest import make_record, write_run

PARTS = {"code", "location", "observed", "allowed"}


def record(task: int, composition: str, success: bool, condition: str | None = None, **over) -> dict:
    params: dict[str, Any] = {"composition": composition, "arbiter": "validator", "paper_name": None, "env": {}}
    return make_record(task, condition or composition, success, condition_params=params, suite="bank-disputes", **over)


def solves(task: int, composition: str) -> bool:
    """By construction: `allowed` solves tasks 0..7 of 10, but only with `location`; the form does nothing."""
    parts = set(composition.split("@")[0].split("+"))
    return {"allowed", "location"} <= parts and task < 8


def grid() -> list[dict]:
    out = []
    for parts in (
        ["retry", "code"],
        ["retry", "code", "location"],
        ["retry", "code", "allowed"],
        ["retry", "code", "location", "allowed"],
    ):
        for form in ("prose", "json"):
            c = "+".join(parts) + "@" + form
            out += [record(t, c, solves(t, c)) for t in range(10)]
    return out


def test_each_factors_effect_is_pooled_over_the_pairs_that_differ_in_it_alone(tmp_path):
    df = load([write_run(tmp_path / "r", grid())])
    table = factor_effects(df, n_boot=2000).table.set_index("factor")
    allowed, location, form = table.loc["allowed"], table.loc["location"], table.loc["form"]
    # with location, allowed adds 8 of 10; without it, nothing: pooled over 4 pairs of arms, 0.4
    assert allowed["arm_pairs"] == 4 and allowed["pairs"] == 40 and allowed["diff"] == 0.4
    assert 0 < allowed["ci_low"] < 0.4 < allowed["ci_high"] and allowed["p_value"] < 0.01
    assert location["diff"] == 0.4 and (form["level_a"], form["level_b"]) == ("prose", "json")
    assert form["diff"] == 0 and form["ci_low"] == 0 == form["ci_high"] and form["p_value"] == 1
    assert set(table["p_holm"] >= table["p_value"]) == {True}
    untestable = {u["factor"] for u in factor_effects(df).untestable}
    assert untestable == {"retry", "code"}  # every arm has them: no pair isolates them


def test_a_single_pair_has_no_interval_and_old_records_are_left_out(tmp_path):
    rows = [record(0, "retry@json", False), record(0, "retry+allowed@json", True)]
    rows.append(make_record(1, "raw", True, suite="bank-disputes"))  # before compositions were recorded
    table = factor_effects(load([write_run(tmp_path / "r", rows)])).table
    (row,) = table.to_dict("records")
    assert row["pairs"] == 1 and row["diff"] == 1 and row["ci_low"] != row["ci_low"]  # NaN: no interval


def test_two_spellings_of_one_composition_are_one_condition_counted_once(tmp_path):
    spelled = "retry+code+location+observed+allowed@json"
    rows = [record(t, spelled, t < 5, condition="allowed_json") for t in range(10)]
    rows += [record(t, spelled, t < 5) for t in range(10)]
    rows += [record(t, "retry+message@prose", t < 2, condition="raw") for t in range(10)]
    df = load([write_run(tmp_path / "r", rows)])
    merged_df, merged = merge_spellings(df)
    assert merged == {spelled: "allowed_json"} and len(merged_df) == 20
    report = json.loads(render_report(df, contrasts=f"{spelled}-raw", fmt="json"))
    assert report["meta"]["merged_spellings"] == {spelled: "allowed_json"}
    assert {(c["condition"], c["n"]) for c in report["cells"]} == {("allowed_json", 10), ("raw", 10)}
    (contrast,) = report["contrasts"]
    assert (contrast["a"], contrast["b"], contrast["n_pairs"]) == ("allowed_json", "raw", 10)


def test_the_report_shows_factors_only_when_asked(tmp_path):
    df = load([write_run(tmp_path / "r", grid())])
    plain = json.loads(render_report(df, fmt="json"))
    assert "factors" not in plain and "merged_spellings" not in plain["meta"]
    asked = json.loads(render_report(df, fmt="json", factors=True))
    assert {r["factor"] for r in asked["factors"]["rows"]} == {"allowed", "location", "form"}
    text = render_report(df, fmt="table", width=120, factors=True)
    assert "Which part of the feedback does the work" in text and "untestable" in text
    assert "# factors" in render_report(df, fmt="csv", factors=True)


def test_a_tiny_p_value_keeps_its_magnitude_in_the_json():
    from results.report import _clean

    assert _clean({"p_value": 3.2e-9, "diff": 0.123456789, "zero": 0.0}) == {
        "p_value": 3.2e-09,
        "diff": 0.123457,
        "zero": 0.0,
    }


def test_a_fork_of_two_tasks_gets_one_answer_from_its_factor_and_its_contrast(tmp_path):
    """32 fork points of 2 tasks: the points of a task are not independent, so the task is the
    unit for the factor `allowed` and for the contrast of the same two arms alike: too few tasks
    for a test or an interval, said by both (not p 3e-05 from one and 0.5 from the other)."""
    from results import contrasts

    rows = []
    for t in range(2):
        for j in range(16):
            fork = f"src:g{t}:{j}"
            rows.append(record(t, "retry+code+location@json", False, condition="loc_obs", fork=fork))
            rows.append(record(t, "retry+code+location+allowed@json", j < 12, condition="allowed_json", fork=fork))
    df = load([write_run(tmp_path / "r", rows)])
    factor = factor_effects(df, n_boot=2000).table.set_index("factor").loc["allowed"]
    contrast = contrasts(df, [("allowed_json", "loc_obs")], n_boot=2000).table.iloc[0]
    assert factor["test"] == contrast["test"] == "too_few_tasks"
    assert factor["diff"] == contrast["diff"] == 0.75
    assert factor["p_value"] != factor["p_value"] and contrast["p_value"] != contrast["p_value"]  # NaN
    assert factor["ci_low"] != factor["ci_low"] and contrast["ci_low"] != contrast["ci_low"]


def test_an_untestable_row_says_untestable_in_the_column_that_never_drops(tmp_path):
    df = load([write_run(tmp_path / "r", grid())])
    for width in (60, 80):
        text = render_report(df, fmt="table", width=width, factors=True)
        table = text[text.index("Which part of the feedback") :]
        assert "untestable: code," in table and "untestable: retry" not in table, table  # names after the word


def test_one_p_value_format_from_a_p_near_1_to_one_below_a_floats_range():
    """Four decimals from 1e-4, scientific below it as in the JSON, never 0: an exact p that underflows
    (0 discordant pairs one way of 1,200 the other) is the floor, a bound, and its Holm p the same."""
    from results.contrasts import P_FLOOR, holm, mcnemar_exact
    from results.formats import _p
    from results.report import _clean

    tiny, gone = mcnemar_exact(0, 435), mcnemar_exact(0, 1200)
    assert 0 < tiny < 1e-100 and gone == P_FLOOR
    assert [_p(x) for x in (0.5, 1e-4, tiny, gone)] == ["0.5000", "0.0001", "2.3e-131", "< 1e-300"]
    assert list(holm([gone, tiny, 0.5])) == [P_FLOOR, 2 * tiny, 0.5]
    assert _clean({"p": gone, "q": tiny}) == {"p": 1e-300, "q": 2.25415e-131}
