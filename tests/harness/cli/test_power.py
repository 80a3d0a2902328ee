"""`repair-harness power`: a pilot's plan per contrast and factor, its noise floor, and bad input."""

from __future__ import annotations

import json

import pytest

from tests.harness.cli.invoke import invoke


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """The reader and the random agent on ten bank tasks, seeds 0..2: several pairs per task."""
    out = tmp_path_factory.mktemp("power") / "pilot"
    result, text = invoke(
        "run", "--suite", "bank-disputes", "--model", "agent:reader,agent:random", "--seeds", "0..2",
        "--conditions", "raw,loc_obs,allowed_prose,allowed_json", "--tasks", "10", "--out", out, "--no-preflight",
    )  # fmt: skip
    assert result.exit_code == 0, text
    return out


def test_power_gives_each_contrast_and_factor_its_mde_and_the_size_an_effect_needs(seeded):
    result, text = invoke("power", seeded, "--effect", "5", "--factors", "--format", "json")
    assert result.exit_code == 0, text
    page = json.loads(result.stdout)
    rows = {(r["model"], r["comparison"]): r for r in page["plan"]}
    reader = rows[("agent:reader", "allowed_json-raw")]
    assert reader["unit"] == "tasks x 3.0 seeds" and (reader["tasks"], reader["pairs"]) == (10, 30)
    assert reader["needed"] >= 8 and reader["needed_pairs"] == 3 * reader["needed"]
    assert reader["power_at_needed"] >= 0.8 and reader["mde"] > 0.05  # ten tasks cannot see 5 points
    # both off-diagonal rates: the reader solves under allowed_json what it fails under raw, never the other way
    assert reader["a_only"] == reader["discordance"] > 0 and reader["b_only"] == 0
    assert ("agent:reader", "allowed: with - without") in rows  # the factor, in its own family
    # the reader plays the same answer under every seed: no flip, no spread, a paired threshold of
    # six tasks one way, which six tasks cannot reach at all
    noise = {(r["model"], r["condition"]): r for r in page["noise"]}
    assert noise[("agent:reader", "raw")]["flip"] == 0 and noise[("agent:reader", "raw")]["repeats"] == 3


def test_simulate_draws_studies_at_the_size_found(seeded):
    args = ["power", seeded, "--effect", "20", "--contrasts", "allowed_json-raw", "--simulate", "200"]
    result, text = invoke(*args, "--format", "json")
    assert result.exit_code == 0, text
    for row in json.loads(result.stdout)["plan"]:
        # 200 studies: a standard error of about 3 points around the power stated
        assert abs(row["simulated"] - row["power_at_needed"]) < 0.1, row
    result, text = invoke(*args, env={"COLUMNS": "200"})
    assert "simulated" in text and "Noise floor" in text


def test_a_null_contrast_in_report_says_what_it_could_have_detected(seeded):
    result, text = invoke("report", seeded, "--format", "json")
    contrasts = json.loads(result.stdout)["contrasts"]
    null = [c for c in contrasts if c["model"] == "agent:random"]
    assert null and all(c["mde"] and c["mde"] > 0 for c in null if c["test"] != "too_few_tasks")
    result, text = invoke("report", "--contrasts", "allowed_json-raw", seeded, env={"COLUMNS": "200"})
    # an observed difference the test cannot call is not "no difference"
    line = next(ln for ln in text.splitlines() if "agent:random: not significant at this size" in ln)
    assert "detectable with 80% power at it: allowed_json-raw ±" in line and "pts" in line
    assert "no difference found" not in text


def test_power_plans_per_suite_the_test_the_report_runs(two_suites):
    """A contrast of a pilot of two suites is planned per suite, in the report's unit and family, and
    the report's first page says once that none of its comparisons can reach significance."""
    result, text = invoke("power", two_suites, "--effect", "5", "--factors", "--format", "json")
    assert result.exit_code == 0, text
    plan = json.loads(result.stdout)["plan"]
    contrasts = [r for r in plan if r["kind"] == "contrast"]
    assert {r["suite"] for r in contrasts} == {"bank-disputes", "tools-travel"}
    assert all(r["tasks"] == 2 and r["pairs"] == 2 and not r["pooled"] for r in contrasts)
    factors = [r for r in plan if r["kind"] == "factor"]
    assert factors and all(r["pooled"] and r["suite"] == "bank-disputes + tools-travel" for r in factors)
    result, text = invoke("report", two_suites, "--format", "json")
    report = json.loads(result.stdout)["contrasts"]
    units = {(c["model"], c["suite"], c["contrast"]): c["n_pairs"] for c in report}
    assert units == {(r["model"], r["suite"], r["comparison"]): r["pairs"] for r in contrasts}
    result, text = invoke("report", two_suites)
    flat = " ".join(text.split())
    assert flat.count("none of these 4 comparisons can reach p < 0.05 with 2 pairs each") == 2  # once a suite
    assert "run ≥ 8 tasks" in flat and "no difference found" not in flat


@pytest.fixture(scope="module")
def two_suites(tmp_path_factory):
    """The reader on two tasks of each of two suites: a pilot the report splits by suite."""
    folder = tmp_path_factory.mktemp("suites")
    for suite in ("bank-disputes", "tools-travel"):
        result, text = invoke(
            "run", "--suite", suite, "--model", "agent:reader", "--conditions",
            "raw,loc_obs,allowed_prose,allowed_json", "--tasks", "2", "--out", folder / suite, "--no-preflight",
        )  # fmt: skip
        assert result.exit_code == 0, text
    return folder


@pytest.mark.parametrize(
    "args, said",
    [
        (["--effect", "0"], "--effect is a difference in points"),
        (["--effect", "5", "--power", "1.5"], "--alpha and --power are shares"),
        (["--effect", "5", "--contrasts", "nope-raw"], "'nope' absent"),
        (["--effect", "5", "--format", "xml"], "unknown format 'xml'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(seeded, args, said):
    result, text = invoke("power", seeded, *args)
    assert result.exit_code == 2 and said in text and "Traceback" not in text


def test_two_runs_of_one_grid_are_read_as_repeats_not_refused(tmp_path):
    """`report` refuses two runs that record the same episodes; a pilot's repeats are just that."""
    for name in ("one", "two"):
        result, text = invoke(
            "run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "raw,allowed_json",
            "--tasks", "8", "--out", tmp_path / name, "--no-preflight",
        )  # fmt: skip
        assert result.exit_code == 0, text
    result, text = invoke("power", tmp_path / "one", tmp_path / "two", "--effect", "10", "--format", "json")
    assert result.exit_code == 0, text
    page = json.loads(result.stdout)
    (row,) = page["plan"]
    assert (row["tasks"], row["pairs"], row["unit"]) == (8, 16, "tasks x 2.0 seeds")
    assert {r["repeats"] for r in page["noise"]} == {2}


def test_at_80_columns_the_mde_the_size_needed_and_its_power_stay(seeded):
    result, text = invoke("power", seeded, "--effect", "5")
    assert result.exit_code == 0, text
    assert max(len(line) for line in text.splitlines() if not line.startswith("pilot:")) <= 80
    section = text[text.index("Power per comparison") :]
    table = section.split("(left out")[0]
    left_out = section[section.index("(left out") :].split(")")[0]
    assert all(word in table for word in ("MDE", "needed", "power"))
    assert not any(word in left_out for word in ("MDE", "needed for", "power there"))
