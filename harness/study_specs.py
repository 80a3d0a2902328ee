"""The study's grids as run specs: the lanes `reproduce paper` plays, and the small ablation `demo`
plays on the embedded CPU model. The study's numbers are `envs.study`'s; this module only arranges
them into RunSpecs (the CLI imports it inside its commands: it brings the spec machinery).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from envs import study
from envs.errors import UserError
from harness.agents import AGENTS
from harness.plugins import load as load_plugins
from harness.run_spec import RunSpec
from harness.serving import LOCAL_MODEL
from harness.spec import build_spec

# The paper's settings: K alternatives, the echo and every value cut to the same length, no fence
# stripping; the protocol is chosen per command.
PAPER_ENV = {"protocol": "plan", "k_allowed": study.K_ALLOWED, "fence_strip": False, "echo_chars": study.CUT}
# `reproduce paper` plays the artifact's own protocol by default; `plan` is our cleaner design
# (conditions differ only in information), kept for comparison. The artifact's lanes played
# fewer conditions than its primary grid: the budget lane raw and typed fields only, the
# sampling lane raw, same-info prose and typed fields.
PROTOCOLS = ("veriharness", "plan")
VERIHARNESS_LANE_CONDITIONS = {
    "primary": list(study.CONDITIONS),
    "budget": ["raw", "allowed_json"],
    "sampling": ["raw", "allowed_prose", "allowed_json"],
}
GREEDY = {"temperature": 0.0, "max_tokens": study.MAX_TOKENS}
LANES: dict[str, dict[str, Any]] = {
    "primary": {"tasks": len(study.GAME_SEEDS), "budgets": [study.BUDGET], "sample_seeds": [0], "decoding": GREEDY},
    "budget": {
        "tasks": study.BUDGET_LANE_GAMES,
        "budgets": list(study.BUDGET_LANE_BUDGETS),
        "sample_seeds": [0],
        "decoding": GREEDY,
    },
    "sampling": {
        "tasks": study.SAMPLING_LANE_GAMES,
        "budgets": [study.BUDGET],
        "sample_seeds": list(study.SAMPLING_LANE_SEEDS),
        "decoding": {
            "temperature": study.SAMPLING_TEMPERATURE,
            "top_p": study.SAMPLING_TOP_P,
            "max_tokens": study.MAX_TOKENS,
        },
    },
}


def paper_spec(
    model: str,
    lane: str,
    endpoints: list[str],
    out: Path,
    games: int | None,
    concurrency: int | None,
    protocol: str = "veriharness",
) -> RunSpec:
    """One lane of the study for one model; `games` plays the first N games instead (a smaller run)."""
    if lane not in LANES:
        raise UserError(f"unknown lane {lane!r}; allowed: {', '.join(LANES)}")
    if protocol not in PROTOCOLS:
        raise UserError(f"unknown protocol {protocol!r} for reproduce paper; allowed: {', '.join(PROTOCOLS)}")
    conditions = VERIHARNESS_LANE_CONDITIONS[lane] if protocol == "veriharness" else list(study.CONDITIONS)
    values = {
        "suite": "paper-textworld",
        "models": [model],
        "conditions": conditions,
        "endpoints": endpoints,
        "feedback_cut": study.CUT,
        "env_options": {**PAPER_ENV, "protocol": protocol},
        "out": str(out),
        "concurrency": concurrency,
        **LANES[lane],
    }
    if games is not None:
        values["tasks"] = games
    return build_spec(values, source=f"reproduce paper --lane {lane}")


def demo_specs(out: Path, bank_tasks: int, games: int, max_tokens: int, plugins: Sequence[str] = ()) -> list[RunSpec]:
    """The README's main job: the paper's conditions on bank-disputes and paper-textworld, played by
    the embedded model and, beside it, the reference agents (instant: each condition's ceiling and
    floor on the same episodes), a plugin's among them; one run directory each, `out`/bank and
    `out`/textworld."""
    load_plugins(plugins)  # before the players are listed: a plugin's agents play too
    common = {
        "plugins": list(plugins),
        "models": [LOCAL_MODEL, *AGENTS],
        "conditions": list(study.CONDITIONS),
        "budgets": [study.BUDGET],
        "concurrency": 1,
        "decoding": {"temperature": 0.0, "max_tokens": max_tokens},
    }
    bank = {"suite": "bank-disputes", "tasks": bank_tasks, "tool_mode": "prompt", "out": str(out / "bank")}
    textworld = {
        "suite": "paper-textworld",
        "tasks": games,
        "feedback_cut": study.CUT,
        "env_options": dict(PAPER_ENV),
        "out": str(out / "textworld"),
    }
    return [build_spec({**common, **values}, source="demo") for values in (bank, textworld)]
