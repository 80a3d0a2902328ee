"""results.solved: solved/N as a row per suite and condition and a column per player (the demo's
page). Arithmetic fixtures, no model."""

from __future__ import annotations

from pathlib import Path

from results import load
from results.solved import render, solved_grid


def test_a_cell_counts_scored_episodes_and_a_retried_error_is_scored(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, c, t == 0, model="local") for c in ("raw", "allowed_json") for t in range(3)]
    recs += [kit.make(0, "raw", True, model="agent:gold"), kit.make(0, "allowed_json", None, model="agent:gold")]
    recs += [kit.make(1, "raw", None, model="local")]  # an error --retry-errors played again: task 1 is scored
    solved = solved_grid(load(kit.write(tmp_path / "r", recs)), ["local", "agent:gold"])
    assert solved.frame.to_dict("records") == [
        {"suite": "paper-textworld", "condition": "raw", "local": "1/3", "gold": "1/1"},
        {"suite": "", "condition": "allowed_json", "local": "1/3", "gold": "0/0"},
    ]
    assert solved.harness_errors == 1  # only gold's allowed_json episode is an error and nothing else
    assert (solved.solved, solved.scored) == ({"agent:gold": 1, "local": 2}, {"agent:gold": 1, "local": 6})


def test_suites_at_several_budgets_get_a_row_per_budget_and_absent_cells_a_dash(kit, tmp_path: Path) -> None:
    recs = [kit.make(0, "raw", b == 8, budget=b, model="m") for b in (2, 8)]
    recs += [kit.make(0, "raw", True, budget=2, model="agent:gold", suite="bank-disputes")]
    frame = solved_grid(load(kit.write(tmp_path / "r", recs))).frame
    assert list(frame.columns) == ["suite", "budget", "condition", "gold", "m"]
    assert frame.to_dict("records") == [
        {"suite": "bank-disputes", "budget": 2, "condition": "raw", "gold": "1/1", "m": "—"},
        {"suite": "paper-textworld", "budget": 2, "condition": "raw", "gold": "—", "m": "0/1"},
        {"suite": "", "budget": 8, "condition": "raw", "gold": "—", "m": "1/1"},
    ]


def test_rendered_at_a_width_players_drop_whole_and_named(kit, tmp_path: Path) -> None:
    players = [f"agent:p{i:02d}-long-name" for i in range(6)]
    recs = [kit.make(0, "raw", True, model=p) for p in players]
    lines = render(solved_grid(load(kit.write(tmp_path / "r", recs)), players), width=60)
    assert max(len(line) for line in lines) <= 60 and "…" not in "".join(lines)
    shown = [p for p in players if p.removeprefix("agent:") in lines[0]]
    assert shown[0] == players[0] and len(shown) < len(players)
    note = " ".join(lines[-2:])
    assert all(p.removeprefix("agent:") in note for p in players if p not in shown)
