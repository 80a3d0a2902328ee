"""`power` bounded and told (issue 66): `--simulate 1000000000` ran with no bound and no word; now a
size takes at most 100,000 studies, and a simulation says what it does with an estimate before it
goes on (and a line every 10 s). Runs of two grids are no repeats of one: refused as `report`
refuses them, where `power` read them as repeats."""

from __future__ import annotations

import re
import shutil

import pytest

from harness import progress
from tests.harness.cli.invoke import invoke

RUN = ("run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "raw,allowed_json")


@pytest.fixture(scope="module")
def pilots(tmp_path_factory):
    root = tmp_path_factory.mktemp("pilots")
    for name, tasks in (("a", "12"), ("b", "6")):
        assert invoke(*RUN, "--tasks", tasks, "--out", root / name)[0].exit_code == 0
    return root


def test_a_simulation_past_the_bound_is_one_line(pilots):
    result, text = invoke("power", pilots / "a", "--effect", "10", "--simulate", "1000000000")
    assert result.exit_code == 2 and "Traceback" not in text, text
    assert text.strip() == (
        "error: --simulate 1,000,000,000: at most 100,000 studies a size (each runs the report's test, 10,000 "
        "bootstrap draws; 1,000 give the power to a standard error of 1.3 points)"
    )


def test_a_simulation_says_what_it_does_and_how_long_before_it_goes_on(pilots, monkeypatch):
    monkeypatch.setattr(progress, "PROGRESS_EVERY_S", 0.0)  # every study: the 10 s line without 10 s
    result, text = invoke("power", pilots / "a", "--effect", "10", "--contrasts", "allowed_json-raw", "--simulate", "3")
    assert result.exit_code == 0, text
    flat = " ".join(text.split())
    first = re.search(r"simulating 3 studies of \d+ for agent:reader (bank-disputes )?allowed_json-raw: about ", flat)
    later = re.search(r"2 of 3 studies for agent:reader (bank-disputes )?allowed_json-raw: about \d+ s left \(", flat)
    assert first and later and first.start() < later.start(), flat


def test_runs_of_two_grids_are_no_repeats(pilots, tmp_path):
    result, text = invoke("power", pilots / "a", pilots / "b", "--effect", "10")
    assert result.exit_code == 2 and "runs of different grids (tasks: 12 vs 6)" in " ".join(text.split()), text
    assert invoke("report", pilots / "a", pilots / "b")[0].exit_code == 2  # as report refuses them
    again = tmp_path / "again"
    shutil.copytree(pilots / "a", again)  # one grid run twice: repeats, as before
    result, text = invoke("power", pilots / "a", again, "--effect", "10")
    assert result.exit_code == 0 and "2 runs of one grid, read as repeats" in " ".join(text.split()), text
