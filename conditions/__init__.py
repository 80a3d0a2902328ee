"""Conditions: what the agent is told after a failure, and who judges. One registry table."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from envs import study
from conditions.arbiters import Arbiter, review_prompt
from conditions.feedback import RENDERERS
from envs.errors import UnknownName
from envs.contract import Violation


@dataclass(frozen=True)
class Condition:
    name: str
    feedback: str
    arbiter: Arbiter
    paper_name: str | None
    description: str
    # suite options this condition sets (the output-contract arms shape the environment's faults)
    env: dict[str, Any] = field(default_factory=dict)

    def render(self, violation: Violation, cut: int | None = None) -> str:
        return RENDERERS[self.feedback](violation, cut)

    def review_prompt(self) -> str | None:
        return review_prompt(self.arbiter)

    def params(self, cut: int | None) -> dict[str, Any]:
        return {"feedback": self.feedback, "arbiter": self.arbiter, "paper_name": self.paper_name, "cut": cut, "env": self.env}


def _c(name: str, feedback: str, arbiter: Arbiter, paper: str | None, text: str, **env: Any) -> tuple[str, Condition]:
    return name, Condition(name, feedback, arbiter, paper, text, env)


CONDITIONS: dict[str, Condition] = dict(
    [
        _c("none", "none", "validator", None, "only 'invalid, try again' (floor)"),
        _c("traceback", "traceback", "validator", None, "the full Python traceback an unguarded tool leaks"),
        _c("raw", "raw", "validator", study.CONDITION_NAMES["raw"], "generic retry line + the validator's raw message"),
        _c("loc_obs", "loc_obs", "validator", study.CONDITION_NAMES["loc_obs"], "label, location, observed value as JSON; no alternatives"),
        _c("allowed_prose", "allowed_prose", "validator", study.CONDITION_NAMES["allowed_prose"], "location, observed, allowed values as prose"),
        _c("allowed_json", "allowed_json", "validator", study.CONDITION_NAMES["allowed_json"], "label, location, observed, allowed as JSON"),
        _c("self_check", "none", "self_check", None, "the model reviews its own call before execution; no validator output"),
        _c("self_check_wait", "none", "self_check_wait", None, "as self_check, prompted by a bare 'Wait'"),
        _c("fault_raw", "allowed_json", "validator", None, "backend faults reach the model as the exception's text", fault_shape="raw"),
        _c("fault_problem", "allowed_json", "validator", None, "backend faults reach the model as RFC 9457 problem details", fault_shape="problem"),
    ]
)

PAPER_CONDITIONS = list(study.CONDITIONS)


def get_condition(name: str) -> Condition:
    if name not in CONDITIONS:
        raise UnknownName("condition", name, list(CONDITIONS))
    return CONDITIONS[name]
