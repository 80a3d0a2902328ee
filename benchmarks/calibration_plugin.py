"""A plugin for benchmarks/calibration.py: an agent whose chance of solving each task under each of two
conditions is planted, so that what a study should find is known.

    REPAIR_PLANTED=plant.json repair-harness run --plugin benchmarks/calibration_plugin.py \\
        --suite bank-disputes --model agent:planted --conditions planted_a,planted_b --seeds 0..7 \\
        --temperature 1 --out runs/planted

The two conditions render a rejection as `raw` does, each with its own first word, so the agent can
tell which arm it plays (a model reads the feedback too). The agent's first call is rejected (a
reason the contract has not), which the env's own validator refuses; then it either plays the gold
call (solved, by the suite's own check) or repeats the rejected call until the budget is spent.

Which one: REPAIR_PLANTED_INTENT=solve|fail forces it (calibration.py plays each task's two outcomes
once that way); otherwise REPAIR_PLANTED (a JSON file) plants it: {"tasks": {task key: {"planted_a":
p, "planted_b": p}}, "coupling": c, "salt": s}, the task key `harness.agents.base.task_seed(reference,
None)` as text. The episode solves when u < p, u uniform from the key, the seed and the salt; with
probability `coupling` both arms of a (task, seed) share u (their outcomes agree as far as their
probabilities allow), else each arm draws its own. The seed is the episode's decoding seed, the sample
seed where the temperature is above 0 (as a sampled model's), hence --temperature 1.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from conditions import register_condition
from envs.contract import Action, Decoding, ToolCall, ToolSpec, Violation
from harness.agents import register_agent
from harness.agents.base import ReferenceAgent, task_seed

ARMS = ("planted_a", "planted_b")


def _render(arm: str) -> Any:
    def render(violation: Violation, cut: int | None) -> str:
        return f"{arm}: {violation.raw}"

    return render


for _arm in ARMS:
    register_condition(_arm, _render(_arm), f"raw feedback, first word {_arm} (benchmarks/calibration.py)")


def uniform(*parts: object) -> float:
    """A uniform in [0, 1) from the parts (stable across processes, unlike hash())."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def solves(key: str, arm: str, seed: int | None, plant: dict[str, Any]) -> bool:
    salt = plant.get("salt", 0)
    shared = uniform(key, seed, salt, "coupled") < plant.get("coupling", 0.0)
    u = uniform(key, seed, salt) if shared else uniform(key, seed, salt, arm)
    return u < float(plant["tasks"][key][arm])


class Planted(ReferenceAgent):
    kind = "planted"
    description = "solves each task under each condition with a planted probability (benchmarks/calibration.py)"

    def decide(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], reference: list[Action], decoding: Decoding
    ) -> Action:
        gold = reference[0]
        assert isinstance(gold, ToolCall)
        wrong = ToolCall(name=gold.name, arguments={**gold.arguments, "reason": "no_such_reason"}, id="call_0")
        if self.turns == 0:
            return wrong
        feedback = str(messages[-1].get("content") or "")
        arm = next((a for a in ARMS if feedback.startswith(a)), None)
        intent = os.environ.get("REPAIR_PLANTED_INTENT")
        if intent is not None or arm is None:
            return gold if intent == "solve" else wrong
        with open(os.environ["REPAIR_PLANTED"], encoding="utf-8") as f:
            plant = json.load(f)
        return gold if solves(str(task_seed(reference, None)), arm, decoding.seed, plant) else wrong


register_agent("agent:planted", Planted)
