"""results.paper holds the published numbers exactly as the study's summary gives them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from envs import study
from results import paper

# a copy of the study summary handed to the project (shared/PAPER.md), kept with the tests
PAPER_MD = Path(__file__).resolve().parents[1] / "data" / "PAPER.md"


def test_primary_table_matches_paper_md() -> None:
    text = PAPER_MD.read_text(encoding="utf-8")
    section = text.split("## Published result", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\w+) \| (\d+) \((\d+)\) \| (\d+) \((\d+)\) \|$", section, flags=re.M)
    assert len(rows) == 4
    for cond, qs, qc, ls, lc in rows:
        assert paper.PRIMARY[("qwen2.5-coder-14b", cond)] == paper.Cell(int(qs), 50, int(qc))
        assert paper.PRIMARY[("llama-3.1-8b", cond)] == paper.Cell(int(ls), 50, int(lc))
    assert "budgets 2, 4, 6, 8 on the first 15 games" in text
    assert paper.BUDGET_LANE.design in text


def test_every_cell_is_present_and_consistent() -> None:
    assert len(paper.PRIMARY) == 8
    assert paper.PRIMARY[("qwen2.5-coder-14b", "raw")].rate == 14 / 50
    assert paper.PRIMARY[("llama-3.1-8b", "allowed_json")].calls_per_game == pytest.approx(149 / 50)
    for a, b in paper.PLANNED_CONTRASTS:
        assert a in study.CONDITIONS and b in study.CONDITIONS


def test_lanes_publish_no_numbers() -> None:
    assert all("publishes no per-cell numbers" in lane.note for lane in (paper.BUDGET_LANE, paper.SAMPLING_LANE))
    assert paper.BUDGET_LANE_BUDGETS == (2, 4, 6, 8) and paper.BUDGET_LANE.games == 15
    assert paper.SAMPLING_LANE_SEEDS == (3101, 3102, 3103)


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        ("qwen2.5-coder-14b-awq", "Qwen2.5-Coder-14B"),
        ("Qwen/Qwen2.5-Coder-14B-Instruct-AWQ", "Qwen2.5-Coder-14B"),
        ("llama-3.1-8b-awq", "Llama-3.1-8B"),
        ("hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4", "Llama-3.1-8B"),
    ],
)
def test_model_map(ours: str, theirs: str) -> None:
    model = paper.paper_model(ours)
    assert model is not None and model.label == theirs


@pytest.mark.parametrize("ours", ["local", "Qwen/Qwen2.5-Coder-14B-Instruct", "qwen2.5-coder-14b-awq-extra", "llama"])
def test_no_substring_matching(ours: str) -> None:
    assert paper.paper_model(ours) is None
    assert paper.reference(ours, "raw") == (None, paper.NO_REFERENCE)


def test_reference_reasons() -> None:
    cell, note = paper.reference("llama-3.1-8b-awq", "allowed_prose", suite="paper-textworld", budget=4)
    assert cell == paper.Cell(29, 50, 161) and "SameNL" in note
    assert paper.reference("llama-3.1-8b-awq", "allowed_prose", budget=6)[1].startswith("budget 6:")
    assert "not the paper's" in paper.reference("llama-3.1-8b-awq", "raw", suite="bank-disputes")[1]
    assert "not in the paper" in paper.reference("llama-3.1-8b-awq", "self_check")[1]
    assert "sampling lane" in paper.reference("llama-3.1-8b-awq", "raw", sample_seed=3102)[1]


def test_self_reflective_headline() -> None:
    assert paper.SELF_REFLECTIVE["completion_gain_points"] == (36.7, 40.0)
    assert paper.SELF_REFLECTIVE["tokens_per_success_ratio"] == (1.8, 2.2)
