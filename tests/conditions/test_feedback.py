import json
import re

import pytest

from conditions import CONDITIONS, get_condition
from envs import study
from envs.contract import Violation
from envs.errors import UnknownName
from tests.conditions.said import said

V = Violation(
    code="invalid_action",
    location="commands[1]",
    observed="take the golden key",
    allowed=["go east", "take worm", "open chest", 'say "hi"'],
    message="command 2 is not admissible",
    raw="Traceback (most recent call last):\n  ...\nValueError: 'take the golden key' not in ['go east', 'take worm']",
)


def parse_prose(text: str) -> dict:
    """Read the four fields back out of the prose rendering (values are JSON-quoted there)."""
    m = re.search(
        r'The error was (".*?") at (".*?"): you sent (".*?"), which is not accepted\. The allowed values are: (.*)\.$',
        text,
        re.S,
    )
    assert m, text
    allowed = json.loads("[" + m[4] + "]")
    return {"error": json.loads(m[1]), "location": json.loads(m[2]), "observed": json.loads(m[3]), "allowed": allowed}


def parse_json(text: str) -> dict:
    return json.loads(text.splitlines()[-1])


def test_prose_and_json_carry_the_same_information():
    prose = parse_prose(said("allowed_prose", V))
    keyed = parse_json(said("allowed_json", V))
    assert prose == keyed == {"error": V.code, "location": V.location, "observed": V.observed, "allowed": V.allowed}


@pytest.mark.parametrize("name", ["loc_obs", "raw", "none", "self_check", "self_check_wait"])
def test_conditions_without_alternatives_never_leak_an_allowed_value(name):
    text = said(name, V)
    for value in V.allowed:
        assert value not in text, (name, value)


def test_loc_obs_shows_location_and_observed_as_keys():
    fields = parse_json(said("loc_obs", V))
    assert fields == {"error": "invalid_action", "location": "commands[1]", "observed": "take the golden key"}


def test_raw_shows_the_validator_message_and_traceback_the_exception():
    assert V.message in said("raw", V)
    assert "location" not in said("raw", V)
    assert "Traceback (most recent call last)" in said("traceback", V)


def test_cut_truncates_each_value_mid_list_like_the_paper():
    long = V.model_copy(update={"allowed": [f"take object number {i}" for i in range(40)]})
    keyed = parse_json(said("allowed_json", cut=60, violation=long))
    assert isinstance(keyed["allowed"], str) and len(keyed["allowed"]) == 60
    assert keyed["allowed"].startswith("take object number 0, take object number 1")
    full = parse_json(said("allowed_json", long))
    assert full["allowed"] == long.allowed


def test_empty_allowed_list_is_said_not_invented():
    v = V.model_copy(update={"allowed": []})
    assert "no list of allowed values" in said("allowed_prose", v)
    assert parse_json(said("allowed_json", v))["allowed"] == []


def test_registry_lists_paper_conditions_and_rejects_unknown_names():
    assert set(study.CONDITIONS) <= set(CONDITIONS)
    with pytest.raises(UnknownName) as exc:
        get_condition("allowed_yaml")
    assert "allowed_yaml" in str(exc.value) and "allowed_json" in str(exc.value)


def test_self_check_arms_have_review_prompts_and_validator_has_none():
    assert get_condition("allowed_json").review_prompt() is None
    assert get_condition("self_check").review_prompt()
    assert get_condition("self_check_wait").review_prompt() == "Wait"


def test_bfcl_native_is_bfcls_own_text_with_nothing_of_ours_around_it():
    text = "Error during execution: GorillaFileSystem.sort() got an unexpected keyword argument 'sort_by'"
    v = Violation(code="unexpected_keyword_argument", location="arguments.sort_by", message="ours", raw=text)
    assert said("bfcl-native", v) == text
    assert said("bfcl-native", v.model_copy(update={"raw": ""})) == "ours"
