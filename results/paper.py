"""The published numbers we compare against, each with its source. Nothing here is measured.

Primary source: Ray & Goyal, "Structured Feedback Improves Repair in an LLM Agent Loop",
arXiv:2607.14167 (July 2026), its primary table ("Published result").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from envs.study import BUDGET, CONDITIONS, GAME_SEEDS, PAPER
from envs.study import CONDITION_NAMES as PAPER_CONDITION_NAMES
from results.columns import C

GAMES = len(GAME_SEEDS)
PRIMARY_SOURCE = f"{PAPER}, primary table (solved of {GAMES}; total model calls)"
SUITE = "paper-textworld"
# Holm family: these four, per model; written A-B, difference = rate(A) - rate(B)
PLANNED_CONTRASTS = (
    ("allowed_prose", "raw"),
    ("allowed_json", "raw"),
    ("allowed_json", "allowed_prose"),
    ("allowed_json", "loc_obs"),
)

NO_REFERENCE = "different model, no published reference"


@dataclass(frozen=True)
class PaperModel:
    key: str
    label: str
    hf_id: str


MODELS = {
    "qwen2.5-coder-14b": PaperModel("qwen2.5-coder-14b", "Qwen2.5-Coder-14B", "Qwen/Qwen2.5-Coder-14B-Instruct-AWQ"),
    "llama-3.1-8b": PaperModel("llama-3.1-8b", "Llama-3.1-8B", "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4"),
}

# Our model names (presets and the HF ids the paper served) -> the paper's model. Exact names
# only: a look-alike (another quantisation, another size) is a different model.
MODEL_MAP = {
    "qwen2.5-coder-14b-awq": "qwen2.5-coder-14b",
    "Qwen/Qwen2.5-Coder-14B-Instruct-AWQ": "qwen2.5-coder-14b",
    "llama-3.1-8b-awq": "llama-3.1-8b",
    "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4": "llama-3.1-8b",
}


@dataclass(frozen=True)
class Cell:
    solved: int
    n: int
    calls: int  # total model calls over the n games

    @property
    def rate(self) -> float:
        return self.solved / self.n

    @property
    def calls_per_game(self) -> float:
        return self.calls / self.n


PRIMARY = {
    ("qwen2.5-coder-14b", "raw"): Cell(14, GAMES, 164),
    ("qwen2.5-coder-14b", "loc_obs"): Cell(18, GAMES, 155),
    ("qwen2.5-coder-14b", "allowed_prose"): Cell(35, GAMES, 147),
    ("qwen2.5-coder-14b", "allowed_json"): Cell(36, GAMES, 130),
    ("llama-3.1-8b", "raw"): Cell(8, GAMES, 179),
    ("llama-3.1-8b", "loc_obs"): Cell(9, GAMES, 174),
    ("llama-3.1-8b", "allowed_prose"): Cell(29, GAMES, 161),
    ("llama-3.1-8b", "allowed_json"): Cell(29, GAMES, 149),
}


@dataclass(frozen=True)
class Lane:
    name: str
    design: str
    games: int
    note: str = "the design is known; the paper publishes no per-cell numbers for it"


BUDGET_LANE = Lane(C.budget, "budgets 2, 4, 6, 8 on the first 15 games", 15)
BUDGET_LANE_BUDGETS = (2, 4, 6, 8)
SAMPLING_LANE = Lane("sampling", "temperature 0.3, top-p 0.9, seeds 3101/3102/3103 on the first 20 games", 20)
SAMPLING_LANE_SEEDS = (3101, 3102, 3103)


class SecondSource(TypedDict):
    source: str
    setting: str
    completion_gain_points: tuple[float, float]
    tokens_per_success_ratio: tuple[float, float]
    ours_structured: str
    ours_plain: str


# The seed document's second source, measured on the API side, not in an agent game loop.
SELF_REFLECTIVE: SecondSource = {
    "source": '"Self-Reflective APIs" (June 2026), its completion-rate and cost-per-success figures',
    "setting": "Anthropic models; machine-readable failure summary vs plain-text diagnostics "
    "(the gain on gpt-4o-mini was not significant)",
    "completion_gain_points": (36.7, 40.0),
    "tokens_per_success_ratio": (1.8, 2.2),  # plain-text cost / structured cost, per success
    "ours_structured": "allowed_json",
    "ours_plain": "raw",
}


def paper_model(model: str) -> PaperModel | None:
    key = MODEL_MAP.get(model)
    return MODELS[key] if key else None


def reference(
    model: str, condition: str, suite: str | None = None, budget: int | None = None, sample_seed: int | None = None
) -> tuple[Cell | None, str]:
    """The published cell for one of our cells, or None and the reason there is none."""
    pm = paper_model(model)
    if pm is None:
        return None, NO_REFERENCE
    if condition not in CONDITIONS:
        return None, f"condition {condition} is not in the paper"
    if suite is not None and suite != SUITE:
        return None, f"suite {suite} is not the paper's {SUITE}"
    if budget is not None and budget != BUDGET:
        return None, f"budget {budget}: {BUDGET_LANE.note}"
    if sample_seed in SAMPLING_LANE_SEEDS:
        return None, f"sampling lane: {SAMPLING_LANE.note}"
    return PRIMARY[(pm.key, condition)], f"{pm.label}, {PAPER_CONDITION_NAMES[condition]}"


def inside(value: float | None, low: float | None, high: float | None) -> bool | None:
    # None (a cell of harness errors only: n = 0) or NaN: no interval to speak of
    if value is None or low is None or high is None or any(v != v for v in (value, low, high)):
        return None
    return bool(low <= value <= high)
