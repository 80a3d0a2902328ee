"""The page the demo ends with (issue 40: it printed 333 lines of tables after the runs): one table
of solved/N per suite and condition with a column per player, what it shows and what it does not,
the run folders and the commands, at most 60 lines of at most 80 columns.

The page is a function of the records and the specs (`harness.readers.demo_page.page`), rendered here
without the model: the four reference agents play the demo's own specs, and the model's column is
`agent:stubborn`'s records relabelled `local` (an arithmetic fixture: it solves nothing, as the
135M model did in every demo measured so far; no number here is a model's)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from harness.agents import AGENTS
from harness.cli.common import run_spec
from harness.readers.demo_page import PAGE_WIDTH, page
from harness.spec import build_spec
from harness.study_specs import demo_specs
from results import load

CONDITIONS = ("raw", "loc_obs", "allowed_prose", "allowed_json")


def _records(cwd: Path, bank_tasks: int, games: int) -> tuple[pd.DataFrame, list]:
    """The demo's records and specs, played where a newcomer plays them: runs/demo of the folder."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd)
        specs = demo_specs(Path("runs/demo"), bank_tasks, games, 128)
        for spec in specs:  # the demo's grid, less the model: the agents play it in a second
            values = {**spec.model_dump(mode="json"), "models": list(AGENTS)}
            run_spec(build_spec(values, source="demo"))
        df = load([Path(s.out) for s in specs])
    local = df[df["model"] == "agent:stubborn"].assign(model="local")
    return pd.concat([local, df], ignore_index=True), specs


@pytest.fixture(scope="module")
def one_each(tmp_path_factory) -> tuple[pd.DataFrame, list]:
    """`repair-harness demo --bank-tasks 1 --games 1`'s records and specs."""
    return _records(tmp_path_factory.mktemp("demo"), 1, 1)


@pytest.fixture(scope="module")
def default_size(tmp_path_factory) -> tuple[pd.DataFrame, list]:
    """`repair-harness demo`'s: 2 bank tasks and 2 games."""
    return _records(tmp_path_factory.mktemp("demo"), 2, 2)


def _cells(lines: list[str]) -> dict[tuple[str, str], list[str]]:
    """The table's rows as (suite, condition) -> the players' values (the suite is named once)."""
    rows, suite = {}, ""
    for line in lines:
        words = line.split()
        if len(words) >= 2 and (words[0] in CONDITIONS or words[1] in CONDITIONS):
            if words[0] not in CONDITIONS:
                suite, words = words[0], words[1:]
            rows[(suite, words[0])] = words[1:]
    return rows


@pytest.mark.parametrize("shape", ["one_each", "default_size"])
def test_the_page_fits_60_lines_of_80_columns_and_names_the_full_report(shape: str, request) -> None:
    df, specs = request.getfixturevalue(shape)
    lines = page(df, specs)
    assert PAGE_WIDTH == 80
    assert len(lines) <= 60 and max(len(line) for line in lines) <= 80, "\n".join(lines)
    parent = Path(specs[0].out).parent
    commands = [line.strip() for line in lines if line.strip().startswith("repair-harness ")]
    assert [c.split()[1] for c in commands] == ["report", "show", "plot", "run"]
    assert commands[0] == f"repair-harness report {parent}"
    assert f"repair-harness plot {parent} --out figures/demo" in commands
    assert any(f"{s.out} " in line and f"{s.suite}:" in line for s in specs for line in lines)


def test_the_table_is_conditions_by_suites_with_a_column_per_player(one_each) -> None:
    df, specs = one_each
    lines = page(df, specs)
    header = next(line for line in lines if line.startswith("suite"))
    assert header.split() == ["suite", "condition", "local", "gold", "reader", "random", "stubborn"]
    cells = _cells(lines)
    assert set(cells) == {(s, c) for s in ("bank-disputes", "paper-textworld") for c in CONDITIONS}
    for (suite, condition), values in cells.items():
        played = df[(df["suite"] == suite) & (df["condition"] == condition)]
        expected = [
            f"{int(played.loc[played['model'] == m, 'success'].sum())}/{int((played['model'] == m).sum())}"
            for m in ("local", *AGENTS)
        ]
        assert values == expected, (suite, condition)
    assert all(values[1] == "1/1" for values in cells.values())  # gold wins every task


def test_the_page_says_what_it_shows_and_what_it_does_not(one_each) -> None:
    df, specs = one_each
    text = " ".join(" ".join(page(df, specs)).split())
    assert "local (SmolLM2-135M on this CPU) solved none of its 8 episodes" in text
    assert "not what feedback does for a model" in text
    assert "The reference agents play the same episodes with no model and show what each condition makes" in text
    for role in ("gold plays each task's solution", "(its ceiling)", "(the floor)"):
        assert role in text


def test_a_model_that_solves_something_is_not_said_to_solve_nothing(one_each) -> None:
    df, specs = one_each
    won = df.assign(success=df["success"] | ((df["model"] == "local") & (df["condition"] == "allowed_json")))
    text = " ".join(" ".join(page(won, specs)).split())
    assert "solved 2 of 8 episodes; 1 task per suite cannot tell conditions apart" in text
    assert "solved none" not in text


def test_a_narrow_terminal_leaves_players_out_by_name(one_each) -> None:
    df, specs = one_each
    lines = page(df, specs, width=50)
    assert max(len(line) for line in lines) <= 50
    flat = " ".join(" ".join(lines).split())
    assert "left out at 50 columns:" in flat and "stubborn" in flat
    assert next(line for line in lines if line.startswith("suite")).split()[:3] == ["suite", "condition", "local"]


def test_the_next_run_of_the_model_says_its_cost_as_this_demo_measured_it(one_each) -> None:
    df, specs = one_each
    mine = df[(df["model"] == "local") & (df["suite"] == "bank-disputes")]
    seconds = float(mine["latency_s"].mean())
    text = " ".join(line.strip().removeprefix("# ") for line in page(df, specs, width=PAGE_WIDTH))
    assert f"about {seconds:.0f} s and" in text and "as this demo measured" in text
