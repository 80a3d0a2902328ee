"""`repair-harness suites` and `conditions`: 80 columns, a suite's options, and the budget `run`
uses."""

import pytest

from envs import suite_entry
from harness.spec import build_spec
from tests.harness.cli.invoke import invoke


@pytest.mark.parametrize("suite", ["tools-travel", "bank-disputes"])
def test_run_uses_the_budget_suites_shows(suite):
    spec = build_spec({"suite": suite, "models": ["local"], "conditions": ["raw"]})
    assert spec.budgets == [suite_entry(suite).budget]
    result, text = invoke("suites", suite)
    assert result.exit_code == 0 and f"budget: {suite_entry(suite).budget} model calls" in text
    assert build_spec({"suite": suite, "models": ["local"], "conditions": ["raw"], "budgets": [3]}).budgets == [3]


def test_suites_name_shows_the_options_of_its_model():
    result, text = invoke("suites", "tools-travel")
    assert result.exit_code == 0 and max(len(line) for line in text.splitlines()) <= 80
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "normalizing | strict" in rows["contract"] and "normalizing" in rows["contract"].split()[2]
    assert "open | enum" in rows["schema"] and "0.0..1.0" in rows["faults"] and "0.25" in rows["faults"]
    result, text = invoke("suites", "tools-trip")
    assert result.exit_code == 2 and "tools-travel" in text


def test_listings_read_at_80_columns():
    for command in ("conditions", "suites"):
        result, text = invoke(command)
        assert result.exit_code == 0 and max(len(line) for line in text.splitlines()) <= 80
        if command == "conditions":
            # every description keeps whole words on lines of useful width (not ~12 characters)
            assert "only 'invalid, try again' (floor)" in text and "self_check_wait" in text
