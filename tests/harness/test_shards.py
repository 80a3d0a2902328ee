"""Shards: `--shard I/N` plays a fixed part of the grid's keys into a directory of its own, and
one report over the folder counts each episode once and names a shard that never ran."""

from __future__ import annotations

import json
import shutil

import pytest

from harness import shards
from harness.runner import expand, select_tasks
from harness.spec import build_spec, resolved
from tests.harness.cli.invoke import invoke

GRID = [
    *("--suite", "bank-disputes", "--model", "agent:reader", "--tasks", "15"),
    *("--conditions", "raw,loc_obs,allowed_prose,allowed_json"),
]


def keys_of(run_dir) -> set[str]:
    return {
        "|".join(str(json.loads(line)[k]) for k in ("task_id", "model", "condition", "budget", "sample_seed"))
        for line in (run_dir / "records.jsonl").read_text().splitlines()
    }


def report(folder) -> dict:
    result, text = invoke("report", folder, "--format", "json")
    assert result.exit_code == 0, text
    return json.loads(text)


@pytest.mark.parametrize("bad", ["3/3", "-1/3", "1", "a/b", "1/0"])
def test_a_shard_that_is_not_i_of_n_is_one_line_and_exit_2(tmp_path, bad):
    result, text = invoke("run", *GRID, "--shard", bad, "--out", tmp_path / "g")
    assert result.exit_code == 2 and "--shard takes I/N with 0 <= I < N" in text and "Traceback" not in text


def test_the_partition_is_disjoint_complete_and_stable_when_the_grid_grows():
    def keys(tasks: int):
        spec = build_spec(
            {
                "suite": "bank-disputes",
                "models": ["agent:reader"],
                "conditions": ["raw", "allowed_json"],
                "tasks": tasks,
            }
        )
        plan = resolved(spec)
        return [e.key for e in expand(plan, select_tasks(plan))]

    small, large = keys(10), keys(20)
    parts = [{k.id() for k in small if shards.shard_of(k, 3) == i} for i in range(3)]
    assert sum(map(len, parts)) == len(small) == len(set().union(*parts)) == 20
    grown = {k.id(): shards.shard_of(k, 3) for k in large}
    assert all(grown[k.id()] == shards.shard_of(k, 3) for k in small)  # a key keeps its shard


def test_three_shards_of_a_60_episode_grid_are_disjoint_and_one_report_counts_60(tmp_path):
    folder = tmp_path / "grid"
    result, text = invoke("run", *GRID, "--shard", "0/3,1/3,2/3", "--out", folder)
    assert result.exit_code == 0, text
    dirs = [folder / f"shard-{i}-of-3" for i in range(3)]
    parts = [keys_of(d) for d in dirs]
    assert sum(map(len, parts)) == 60 and len(set().union(*parts)) == 60  # disjoint, union 60
    plan = json.loads((folder / "plan.json").read_text())
    assert [r["dir"] for r in plan["runs"]] == [d.name for d in dirs]
    assert [sum(c[-1] for c in r["cells"]) for r in plan["runs"]] == list(map(len, parts))
    whole = report(folder)
    assert whole["meta"]["episodes"] == 60 and whole["gaps"] == []
    assert whole["meta"]["planned_cells"] == 4 and whole["meta"]["shards"] == {
        "planned": 3,
        "missing": [],
        "cells_missing": 0,
    }
    # one array task per shard, on any machine: the same partition, the same records
    again = tmp_path / "again"
    for i in range(3):
        result, text = invoke("run", *GRID, "--shard", f"{i}/3", "--out", again)
        assert result.exit_code == 0, text
        assert keys_of(again / f"shard-{i}-of-3") == parts[i]

    shutil.rmtree(dirs[2])
    partial = report(folder)
    assert partial["meta"]["episodes"] == 60 - len(parts[2])
    assert partial["meta"]["shards"]["missing"] == [str(dirs[2])] and partial["meta"]["shards"]["cells_missing"] == 4
    assert {(g["run_dir"], g["status"], g["run_started"]) for g in partial["gaps"]} == {
        (str(dirs[2]), "not run", False)
    }
    assert sum(g["expected"] for g in partial["gaps"]) == len(parts[2])
    result, text = invoke("report", folder)
    flat = " ".join(text.split())
    assert f"shards: 3 planned, 2 with records; never ran: {dirs[2]}" in flat
    assert "grid: 4 cells planned, 0 with full results, 4 without" in flat
    alone = report(dirs[0])  # a shard named alone is judged against its own part of the grid
    assert alone["gaps"] == [] and alone["meta"]["episodes"] == len(parts[0])


def test_a_dry_run_of_shards_names_each_shards_directory_and_writes_nothing(tmp_path):
    result, text = invoke("run", *GRID, "--shard", "0/2,1/2", "--out", tmp_path / "g", "--dry-run")
    assert result.exit_code == 0, text
    assert f"{tmp_path / 'g' / 'shard-0-of-2'}:" in text and f"{tmp_path / 'g' / 'shard-1-of-2'}:" in text
    assert not (tmp_path / "g").exists()


def test_a_dry_run_counts_the_episodes_left_and_the_models_among_them(tmp_path):
    args = ["run", "--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw,allowed_json"]
    result, text = invoke(*args, "--tasks", "3", "--out", tmp_path / "r", "--dry-run", "--format", "json")
    assert result.exit_code == 0, text
    assert json.loads(result.stdout)["episodes"] == {"grid": 6, "to_play": 6, "models_to_play": 0}
    assert invoke(*args, "--tasks", "2", "--out", tmp_path / "r")[0].exit_code == 0
    result, text = invoke(*args, "--tasks", "3", "--out", tmp_path / "r", "--dry-run")
    assert "6 episodes in the grid, 2 to play (2 of them reference agents', which take no time)" in " ".join(
        text.split()
    )


def test_more_shards_than_episodes_is_one_line_before_memory_is_spent(tmp_path):
    from tests.harness.cli.invoke import invoke

    args = ("run", "--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw", "--tasks", "2")
    result, text = invoke(*args, "--shard", "0/30000000", "--out", tmp_path / "r")
    assert result.exit_code == 2 and "30,000,000 parts for a grid of 2 episodes" in " ".join(text.split())
    assert not (tmp_path / "r").exists()


def test_a_grid_larger_than_one_run_plays_is_one_line_before_it_is_expanded(tmp_path):
    from tests.harness.cli.invoke import invoke

    args = ("run", "--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw", "--tasks", "1")
    result, text = invoke(*args, "--seeds", "0..2999999", "--out", tmp_path / "r")
    assert result.exit_code == 2 and "the grid has 3,000,000 episodes" in " ".join(text.split())
    assert not (tmp_path / "r").exists()
