"""Any name of a condition answers (results.spellings): a grid that named `allowed_json` and its
spelling played them once under one name; the other is what a user may type afterwards, in
`report --contrasts`, `show --condition` and the figures. Reference agents' runs: nothing measured."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from results.contrasts import parse_contrasts
from results.errors import UsageError
from results.spellings import other_names, setting_of, shown_as
from tests.harness.cli.invoke import invoke

SPELLED = "retry+code+location+observed+allowed@json"


def _setting(composition: str) -> str:
    return setting_of({"composition": composition, "arbiter": "validator", "env": {}})


def test_a_name_means_the_condition_shown_of_its_composition_arbiter_and_settings():
    shown = {SPELLED: _setting(SPELLED), "raw": _setting("retry+message@prose")}
    assert shown_as("allowed_json", shown) == SPELLED  # a registered alias
    assert shown_as("allowed+observed+location+code+retry@json", shown) == SPELLED  # parts in any order
    assert shown_as("raw", shown) == "raw" and shown_as("loc_obs", shown) is None
    assert shown_as("no-such-name", shown) is None  # not a condition: the caller names what is present
    # self_check shows what allowed_json shows, but another arbiter judges: not the same condition
    assert other_names(shown) == {"allowed_json": SPELLED}


def test_a_contrast_by_another_name_is_the_condition_shown_and_a_pair_of_one_is_refused():
    also = {"allowed_json": SPELLED}
    assert parse_contrasts("allowed_json-raw", {SPELLED, "raw"}, also) == [(SPELLED, "raw")]
    with pytest.raises(UsageError, match="compares a condition with itself"):
        parse_contrasts(f"allowed_json-{SPELLED}", {SPELLED, "raw"}, also)
    with pytest.raises(UsageError, match=re.escape(f"present: raw, {SPELLED}; allowed_json means {SPELLED}")):
        parse_contrasts("allowedjson-raw", {SPELLED, "raw"}, also)


def test_a_grid_naming_one_condition_twice_says_so_and_answers_to_either_name(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result, text = invoke(
        "run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions",
        f"{SPELLED},raw,allowed_json", "--tasks", "2", "--out", out,
    )  # fmt: skip
    assert result.exit_code == 0, text
    first = " ".join(text.split("episodes to play")[0].split())
    assert f"allowed_json is {SPELLED} by another name: played once, as {SPELLED}" in first
    assert "4 episodes to play" in text  # 2 tasks x 2 conditions, not 3
    for name in ("allowed_json", SPELLED):
        result, text = invoke("report", out, "--contrasts", f"{name}-raw", "--format", "json")
        assert result.exit_code == 0, text
        assert f'"contrast": "{SPELLED}-raw"' in text
        result, text = invoke("show", out, "--condition", name, "--task", "bank-0001")
        assert result.exit_code == 0 and f"condition {SPELLED}" in " ".join(text.split()), text
    result, text = invoke("report", out, "--contrasts", "allowedjson-raw")
    assert result.exit_code == 2 and "allowed_json means" in " ".join(text.split())
