"""Conditions: what the agent is told after a failure, and who judges. One registry table.

A condition is resolved once, when the spec loads, for the feedback family of the suite it will
play and the run's feedback cut (`resolve`): the message renderers of `conditions.feedback`, or a
protocol's own family (`conditions.veriharness`). The resolved value is what the episode carries
(`EpisodeContext.condition`, typed by the Protocol `envs.contract.Condition`): what it shows
(`render` / `items`), what it sets in the environment (`sets`), who reviews (`review_prompt`) and
what a record keeps of it (`record`).
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from conditions.arbiters import Arbiter, review_prompt
from conditions.feedback import RENDERERS
from envs import study
from envs.contract import Violation
from envs.errors import UnknownName, UserError

ItemRenderer = Callable[[Violation, "int | None"], list[str]]


def _message(render: Callable[[Violation, int | None], str]) -> ItemRenderer:
    return lambda v, cut: [render(v, cut)]


# family -> feedback name -> renderer: the lines the agent is shown about one rejected call. A
# protocol's family is "module:TABLE", imported when a spec first resolves a condition in it
# (the veriharness renderers read TextWorld's gates: listing conditions imports no game code).
FAMILIES: dict[str, dict[str, ItemRenderer] | str] = {
    "message": {name: _message(render) for name, render in RENDERERS.items()},
    "veriharness": "conditions.veriharness:RENDERERS",
}


def family(name: str) -> dict[str, ItemRenderer]:
    table = FAMILIES[name]
    if isinstance(table, str):
        module, attr = table.split(":")
        table = FAMILIES[name] = dict(getattr(importlib.import_module(module), attr))
    return table


@dataclass(frozen=True)
class Condition:
    """A named condition, and once `resolve` has bound it to a suite's feedback family and the run's
    feedback cut, the value an episode is played under (`envs.contract.Condition`, the Protocol
    that environments and the loop read: they never import this package)."""

    name: str
    feedback: str
    arbiter: Arbiter
    paper_name: str | None
    description: str
    # suite options this condition sets (the output-contract arms shape the environment's faults)
    env: dict[str, Any] = field(default_factory=dict)
    # whose renderers write its feedback (set by `resolve` for the suite it plays)
    family: str = "message"
    # every rendered value is cut to this many characters (the run's --feedback-cut; the paper: 240)
    cut: int | None = None

    def items(self, violation: Violation) -> list[str]:
        """The feedback lines about one rejected call (one message in the message family)."""
        return family(self.family)[self.feedback](violation, self.cut)

    def render(self, violation: Violation) -> str:
        return "\n".join(self.items(violation))

    def review_prompt(self) -> str | None:
        return review_prompt(self.arbiter)

    def sets(self, key: str) -> Any:
        """What this condition sets in the environment under `key` (None when it sets nothing)."""
        return self.env.get(key)

    def record(self) -> dict[str, Any]:
        """What a record keeps of the condition beside its name (the cut and the tool mode are the
        run's settings: the record's `config` holds them)."""
        return {"feedback": self.feedback, "arbiter": self.arbiter, "paper_name": self.paper_name, "env": self.env}


def _c(name: str, feedback: str, arbiter: Arbiter, paper: str | None, text: str, **env: Any) -> tuple[str, Condition]:
    return name, Condition(name, feedback, arbiter, paper, text, env)


CONDITIONS: dict[str, Condition] = dict(
    [
        _c("none", "none", "validator", None, "only 'invalid, try again' (floor)"),
        _c("traceback", "traceback", "validator", None, "the full Python traceback an unguarded tool leaks"),
        _c("raw", "raw", "validator", study.CONDITION_NAMES["raw"], "generic retry line + the validator's raw message"),
        _c(
            "loc_obs",
            "loc_obs",
            "validator",
            study.CONDITION_NAMES["loc_obs"],
            "label, location, observed value as JSON; no alternatives",
        ),
        _c(
            "allowed_prose",
            "allowed_prose",
            "validator",
            study.CONDITION_NAMES["allowed_prose"],
            "location, observed, allowed values as prose",
        ),
        _c(
            "allowed_json",
            "allowed_json",
            "validator",
            study.CONDITION_NAMES["allowed_json"],
            "label, location, observed, allowed as JSON",
        ),
        _c(
            "self_check",
            "none",
            "self_check",
            None,
            "the model reviews its own call before execution; no validator output",
        ),
        _c("self_check_wait", "none", "self_check_wait", None, "as self_check, prompted by a bare 'Wait'"),
        _c(
            "fault_raw",
            "allowed_json",
            "validator",
            None,
            "backend faults reach the model as the exception's text",
            fault_shape="raw",
        ),
        _c(
            "fault_problem",
            "allowed_json",
            "validator",
            None,
            "backend faults reach the model as RFC 9457 problem details",
            fault_shape="problem",
        ),
    ]
)


def get_condition(name: str) -> Condition:
    if name not in CONDITIONS:
        raise UnknownName("condition", name, list(CONDITIONS))
    return CONDITIONS[name]


class UnplayableCondition(UserError):
    """A condition the suite's feedback family has no renderer for."""


def resolve(name: str, family_name: str, who: str = "this suite", cut: int | None = None) -> Condition:
    """The condition as it plays in a feedback family, its values cut to `cut` characters: the one
    check of what a protocol can play."""
    condition = get_condition(name)
    renderers = family(family_name)
    if condition.feedback not in renderers:
        playable = [c.name for c in CONDITIONS.values() if c.feedback in renderers and not c.env]
        raise UnplayableCondition(
            f"{who} cannot play condition {name!r} (it has {family_name} feedback for "
            f"{', '.join(playable)} only); allowed: {', '.join(playable)}"
        )
    return dataclasses.replace(condition, family=family_name, cut=cut)
