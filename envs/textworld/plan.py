"""The plan protocol (the paper's): one JSON plan per model call, replayed from the game's start.

Failure codes and what their Violation carries (locations are 0-based JSON paths into the answer,
and `message` numbers commands the same way, as the paper's validator did):

| code                | location             | observed           | allowed                                 |
|---------------------|----------------------|--------------------|-----------------------------------------|
| unparseable_plan    | None / answer / ...  | the text or value  | the expected answer form                |
| empty_plan          | answer.commands      | []                 | "at least 1 command"                    |
| too_many_commands   | answer.commands      | the count          | "at most N commands"                    |
| invalid_action      | answer.commands[i]   | the command        | first K admissible commands, game order |
| game_lost           | answer.commands[i]   | the command        | the expected outcome                    |
| quest_incomplete    | answer.commands      | the commands       | the expected outcome                    |

Besides invalid_action, `allowed` holds the expectation the paper's validator reported for that
failure; conditions without alternatives drop it like any other `allowed`. A command is only ever
compared with the admissible strings: an over-long one or one with control characters is an
invalid_action found without a lookup. A tool call is an unparseable_plan (this env reads text).
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from envs.contract import Accepted, Action, Opening, Outcome, TextAnswer, Violation
from envs.textworld.engine import GameModel
from envs.textworld.manifest import GameEntry
from envs.textworld.options import PlayOptions
from envs.textworld.prompts import PLAN_SCHEMA_EXAMPLE, plan_messages

MAX_ANSWER_CHARS = 100_000
_FENCE = re.compile(r"```[ \t]*[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)```", re.S)
_GOAL = "a command sequence that completes the objective"


class PlanRejected(Exception):
    """A plan failed one check. Raised, so that the Violation carries a real traceback."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        location: str | None = None,
        observed: Any = None,
        allowed: list[str] | None = None,
    ):
        super().__init__(message)
        self.code, self.location, self.observed, self.allowed = code, location, observed, allowed or []

    def violation(self) -> Violation:
        return Violation.from_exception(
            self,
            code=self.code,
            message=str(self),
            location=self.location,
            observed=self.observed,
            allowed=self.allowed,
        )


def _cut(text: str, limit: int = 1000) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def find_fence(text: str) -> re.Match[str] | None:
    return _FENCE.search(text)


def parse_plan(text: str, fence_strip: bool) -> list[Any]:
    """The `commands` list of an answer `{"answer": {"commands": [...]}}` (JSON only, never eval).
    `answer` may also be a JSON string holding that object, as the paper's parser allowed."""
    form = [PLAN_SCHEMA_EXAMPLE]
    if len(text) > MAX_ANSWER_CHARS:
        raise PlanRejected(
            "unparseable_plan",
            f"the answer is longer than {MAX_ANSWER_CHARS} characters",
            observed=_cut(text),
            allowed=form,
        )
    fence = find_fence(text) if fence_strip else None
    body = fence.group(1) if fence else text
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        raise PlanRejected(
            "unparseable_plan", f"the answer is not valid JSON: {exc}", observed=_cut(text), allowed=form
        ) from exc
    if not isinstance(data, dict) or "answer" not in data:
        raise PlanRejected(
            "unparseable_plan", 'the answer has no "answer" key', location="answer", observed=data, allowed=form
        )
    answer = data["answer"]
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except (ValueError, RecursionError) as exc:
            raise PlanRejected(
                "unparseable_plan",
                f'"answer" is a string that is not valid JSON: {exc}',
                location="answer",
                observed=data["answer"],
                allowed=form,
            ) from exc
    if not isinstance(answer, dict) or "commands" not in answer:
        raise PlanRejected(
            "unparseable_plan",
            'the answer has no "commands" list',
            location="answer.commands",
            observed=answer,
            allowed=form,
        )
    commands = answer["commands"]
    if not isinstance(commands, list):
        raise PlanRejected(
            "unparseable_plan", '"commands" is not a list', location="answer.commands", observed=commands, allowed=form
        )
    for i, command in enumerate(commands):
        if not isinstance(command, str):
            raise PlanRejected(
                "unparseable_plan",
                f"command {i} is not a string",
                location=f"answer.commands[{i}]",
                observed=command,
                allowed=["a command string"],
            )
    return commands


def check_size(commands: list[str], max_commands: int) -> None:
    if not commands:
        raise PlanRejected(
            "empty_plan",
            "the plan has no commands",
            location="answer.commands",
            observed=[],
            allowed=["at least 1 command"],
        )
    if len(commands) > max_commands:
        raise PlanRejected(
            "too_many_commands",
            f"the plan has {len(commands)} commands",
            location="answer.commands",
            observed=len(commands),
            allowed=[f"at most {max_commands} commands"],
        )


def replay(model: GameModel, commands: list[str], k_allowed: int | None, max_chars: int) -> Accepted:
    """Play the plan from the initial state; the first command that is not admissible stops it."""
    game = model.start()
    for i, raw in enumerate(commands):
        command = raw.strip()
        where = f"answer.commands[{i}]"
        shown = game.admissible if k_allowed is None else game.admissible[:k_allowed]
        if len(command) > max_chars:
            raise PlanRejected(
                "invalid_action",
                f"command {i} is longer than {max_chars} characters",
                location=where,
                observed=command[:max_chars] + "…",
                allowed=shown,
            )
        if any(unicodedata.category(ch) == "Cc" for ch in command):
            raise PlanRejected(
                "invalid_action",
                f"command {i} contains control characters",
                location=where,
                observed=command,
                allowed=shown,
            )
        if command not in game.admissible:
            raise PlanRejected(
                "invalid_action", f"command {i} is not admissible", location=where, observed=command, allowed=shown
            )
        game.step(command)
        if game.won:
            return Accepted(
                observation=f"You won: the objective is complete after {i + 1} commands (score {game.score}).",
                done=True,
                won=True,
            )
        if game.lost:
            raise PlanRejected(
                "game_lost", f"the game was lost at command {i}", location=where, observed=command, allowed=[_GOAL]
            )
    raise PlanRejected(
        "quest_incomplete",
        "the plan ended without completing the objective",
        location="answer.commands",
        observed=[c.strip() for c in commands],
        allowed=[_GOAL],
    )


class PlanEnv:
    """One game under the plan protocol. Stateless between calls: every plan starts afresh."""

    # every plan is replayed on the game: milliseconds of CPU
    blocking = True

    def __init__(self, entry: GameEntry, model: GameModel, options: PlayOptions, budget: int):
        self.entry, self.model, self.options, self.budget = entry, model, options, budget
        self.fenced: list[bool] = []
        self._closed = False

    def reset(self) -> Opening:
        return Opening(
            messages=plan_messages(self.entry, self.options.max_commands, self.budget),
            tools=[],
            history="last",
            accepts=frozenset({"text"}),
            echo_chars=self.options.echo_chars,
        )

    def submit(self, action: Action) -> Outcome:
        if self._closed:
            raise RuntimeError("submit() on a closed TextWorld env")
        try:
            if not isinstance(action, TextAnswer):
                raise PlanRejected(
                    "unparseable_plan",
                    "expected a JSON plan as text, got a tool call",
                    location="answer",
                    observed={"tool": action.name, "arguments": action.arguments},
                    allowed=[PLAN_SCHEMA_EXAMPLE],
                )
            self.fenced.append(bool(action.fenced or find_fence(action.text)))
            commands = parse_plan(action.text, self.options.fence_strip)
            check_size(commands, self.options.max_commands)
            return replay(self.model, commands, self.options.k_allowed, self.options.max_command_chars)
        except PlanRejected as exc:
            return exc.violation()

    def reference(self) -> list[Action]:
        """The game's walkthrough as one plan."""
        return [TextAnswer(text=json.dumps({"answer": {"commands": list(self.entry.walkthrough)}}))]

    def record_extra(self) -> dict[str, Any]:
        return {
            "protocol": "plan",
            # what one action is (results.dynamics: a new plan after a rejected one is the repair attempt)
            "action": "plan",
            "game_seed": self.entry.seed,
            "fence_strip": self.options.fence_strip,
            "fenced_answers": sum(self.fenced),
            "fenced": list(self.fenced),
        }

    def close(self) -> None:
        self._closed = True
