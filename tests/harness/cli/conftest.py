"""A run folder of the reference agents, shared by the `report` and `show` tests."""

from pathlib import Path

import pytest

from tests.harness.cli.invoke import invoke


@pytest.fixture(scope="session")
def agents_run(tmp_path_factory) -> Path:
    """Two reference agents on two bank tasks under four conditions, in one folder."""
    out = tmp_path_factory.mktemp("agents") / "bank"
    result, text = invoke(
        "run",
        "--suite",
        "bank-disputes",
        "--model",
        "agent:gold,agent:reader",
        "--conditions",
        "raw,loc_obs,allowed_prose,allowed_json",
        "--tasks",
        "2",
        "--tool-mode",
        "prompt",
        "--out",
        out,
    )
    assert result.exit_code == 0, text
    return out
