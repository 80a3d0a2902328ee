"""The artifact's gate stack for a TextWorld task, on our replay engine.

Gates run in the artifact's order, and each failure carries the code, message and details the
artifact's gate gave, since the feedback renderers read them. Of its stack, only these can fail
on this task family: schema (task id, parse, empty answer), artifact (`action_plan.json`
listed), textworld (the plan replayed from the initial state must win) and the soft
llm_verifier (a self-assessed "unsupported" risk; it never blocks acceptance but its failure is
reported with the others). Its evidence, code_sanity, public_test and deterministic gates always
pass here (no evidence required, not a code task, no deterministic checks) and are left out.
The post-hoc oracle repeats the textworld gate and is not shown to the model, so it is left out
too. An attempt is accepted, and the episode solved, when every hard gate passes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from envs.textworld.engine import GameModel
from envs.textworld.veriharness import stimuli as s
from envs.textworld.veriharness.envelope import LeafOutput


@dataclass(frozen=True)
class Failure:
    code: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GateResult:
    gate: str
    failures: tuple[Failure, ...] = ()
    hard: bool = True

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class GateReport:
    """One rejected attempt as the veriharness feedback renderers read it (a Violation's `detail`):
    the parsed envelope, every gate's result, the task id the prompt named, how much of the
    answer a retry echoes."""

    leaf: LeafOutput
    results: tuple[GateResult, ...]
    task_id: str
    echo_chars: int | None


def schema_gate(leaf: LeafOutput, task_id: str) -> GateResult:
    out = []
    if leaf.task_id != task_id:
        out.append(Failure("task_id_mismatch", s.MSG_TASK_ID_MISMATCH))
    if leaf.self_assessment.get("parse_error"):
        out.append(
            Failure("schema_invalid", s.MSG_SCHEMA_INVALID, {"parse_error": leaf.self_assessment["parse_error"]})
        )
    if leaf.self_assessment.get("client_error"):
        out.append(Failure("client_error", s.MSG_CLIENT_ERROR, {"client_error": leaf.self_assessment["client_error"]}))
    if not leaf.answer:
        out.append(Failure("empty_answer", s.MSG_EMPTY_ANSWER))
    return GateResult("schema", tuple(out))


def artifact_gate(leaf: LeafOutput) -> GateResult:
    if s.REQUIRED_ARTIFACT in leaf.artifacts:
        return GateResult("artifact")
    missing = Failure("artifact_missing", s.MSG_ARTIFACT_MISSING.format(artifact=s.REQUIRED_ARTIFACT))
    return GateResult("artifact", (missing,))


def llm_verifier_gate(leaf: LeafOutput) -> GateResult:
    risks = leaf.self_assessment.get("risks", [])
    flagged = isinstance(risks, list) and any(s.VERIFIER_RISK_MARKER in str(r).lower() for r in risks)
    return GateResult("llm_verifier", (Failure("verifier_risk", s.MSG_VERIFIER_RISK),) if flagged else (), hard=False)


def _answer_object(answer: str) -> dict[str, Any]:
    try:
        data = json.loads(answer)
    except (ValueError, RecursionError):
        return {"text": answer}
    return data if isinstance(data, dict) else {"value": data}


def _fail(code: str, message: str, **details: Any) -> GateResult:
    return GateResult("textworld", (Failure(code, message, details),))


def textworld_gate(leaf: LeafOutput, model: GameModel, max_steps: int, k_allowed: int | None) -> GateResult:
    commands = _answer_object(leaf.answer).get("commands")
    if not isinstance(commands, list) or not all(isinstance(c, str) for c in commands):
        return _fail(
            "action_plan_invalid",
            s.MSG_PLAN_INVALID,
            location=s.LOCATION_COMMANDS,
            expected=s.EXPECTED_PLAN_INVALID,
            observed=commands,
        )
    if not commands:
        return _fail(
            "command_missing",
            s.MSG_COMMAND_MISSING,
            location=f"{s.LOCATION_COMMANDS}[0]",
            expected=s.EXPECTED_COMMAND_MISSING,
            observed=commands,
        )
    if len(commands) > max_steps:
        return _fail(
            "turn_budget_exceeded",
            s.MSG_TURN_BUDGET.format(n=len(commands), max_steps=max_steps),
            location=s.LOCATION_COMMANDS,
            expected=s.EXPECTED_TURN_BUDGET.format(max_steps=max_steps),
            observed=len(commands),
        )
    game = model.start()
    for index, raw in enumerate(commands):
        command = raw.strip()
        if command not in game.admissible:
            shown = game.admissible if k_allowed is None else game.admissible[:k_allowed]
            return _fail(
                "action_invalid",
                s.MSG_ACTION_INVALID.format(index=index),
                location=f"{s.LOCATION_COMMANDS}[{index}]",
                expected=list(shown),
                observed=command,
            )
        game.step(command)
        if game.won:
            return GateResult("textworld")
        if game.lost:
            return _fail(
                "game_lost",
                s.MSG_GAME_LOST,
                location=f"{s.LOCATION_COMMANDS}[{index}]",
                expected=s.EXPECTED_GAME_LOST,
                observed=command,
            )
    return _fail(
        "quest_incomplete",
        s.MSG_QUEST_INCOMPLETE,
        location=s.LOCATION_COMMANDS,
        expected=s.EXPECTED_QUEST_INCOMPLETE,
        observed=commands,
    )


def run_gates(
    leaf: LeafOutput, task_id: str, model: GameModel, max_steps: int, k_allowed: int | None
) -> list[GateResult]:
    return [
        schema_gate(leaf, task_id),
        artifact_gate(leaf),
        textworld_gate(leaf, model, max_steps, k_allowed),
        llm_verifier_gate(leaf),
    ]


def accepted(results: list[GateResult]) -> bool:
    return all(r.passed for r in results if r.hard)
