"""What every reference agent shares: the Backend interface, the episode hook and the turn.

A reference agent is not a model: it answers through the same `Backend` interface so that the
loop, the records and the reports are the same, but its turns cost no tokens (usage 0 and 0: it
used none, which is known, not missing) and its `model_id` says what it is. The runner gives it
the episode's environment through `for_episode(env)`, which returns a fresh agent for that
episode (a backend is shared by concurrent workers; an agent's state is per episode). The agent
reads only `env.reference()`, the task's known solution, at its first turn (after `reset()`),
and afterwards only the messages the loop sends it, as a model does.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from envs.contract import Action, Decoding, Env, TextAnswer, ToolCall, ToolSpec
from harness.errors import HarnessError
from harness.types import ModelTurn, ToolMode, Usage

PREFIX = "agent:"


class NoReference(HarnessError):
    """The environment states no known solution: a reference agent cannot play it (a harness error
    of the episode, never an agent failure)."""


def reference_of(env: Env) -> list[Action]:
    actions = list(env.reference())
    if not actions:
        raise NoReference(f"{type(env).__name__}.reference() is empty")
    return actions


def task_seed(actions: list[Action], seed: int | None) -> int:
    """A stable per-task seed: the reference itself (no two tasks share one) and the run's seed."""
    blob = json.dumps([a.model_dump(mode="json") for a in actions], sort_keys=True) + f"|{seed}"
    return int(hashlib.sha256(blob.encode()).hexdigest()[:12], 16)


class ReferenceAgent:
    """Subclasses define `decide(messages, tools, reference) -> Action`."""

    kind = ""
    description = ""

    def __init__(self, env: Any = None):
        self.name = PREFIX + self.kind
        self._env = env
        self._reference: list[Action] | None = None
        self.turns = 0

    def for_episode(self, env: Any) -> ReferenceAgent:
        return type(self)(env)

    async def model_id(self) -> str | None:
        return f"{self.name} (reference agent: no model, no tokens)"

    async def aclose(self) -> None:
        return None

    def reference(self) -> list[Action]:
        if self._env is None:
            raise NoReference(f"{self.name} was not given the episode (the runner calls for_episode(env))")
        if self._reference is None:
            self._reference = reference_of(self._env)
        return self._reference

    async def generate(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], decoding: Decoding, tool_mode: ToolMode
    ) -> ModelTurn:
        action = self.decide(messages, tools, self.reference(), decoding)
        self.turns += 1
        return as_turn(action, tool_mode, self.name)

    def decide(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], reference: list[Action], decoding: Decoding
    ) -> Action:
        raise NotImplementedError

    def observe(
        self,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        decoding: Decoding,
        turn: ModelTurn,
        failed: int | None = None,
    ) -> None:
        """A fork's replayed call (harness.replay.Observer): the agent takes its turn as if it
        played it, so that its state is what its own play would have left, then `adopt`s what
        was actually sent (another player's call, when the fork repairs another's failure; at the
        fork point, the call that failed: `failed`, its index in the answer)."""
        mine = self.decide(messages, tools, self.reference(), decoding)
        self.turns += 1
        sent = action_of(turn, failed)
        if not same_action(mine, sent):
            self.adopt(sent)

    def adopt(self, sent: Action) -> None:
        """What another player sent at this turn; an agent that follows its reference ignores it."""


def action_of(turn: ModelTurn, at: int | None = None) -> Action:
    """The action of a recorded answer that counts: its call `at`, else its first tool call, else its text."""
    if turn.tool_calls:
        return turn.tool_calls[at if at is not None and at < len(turn.tool_calls) else 0]
    return TextAnswer(text=turn.text, fenced=turn.fenced)


def same_action(a: Action, b: Action) -> bool:
    """The same call (name and arguments) or the same text; ids and parse modes aside."""
    if isinstance(a, ToolCall) and isinstance(b, ToolCall):
        return a.name == b.name and a.arguments == b.arguments
    return isinstance(a, TextAnswer) and isinstance(b, TextAnswer) and a.text == b.text


def as_turn(action: Action, tool_mode: ToolMode, name: str) -> ModelTurn:
    usage = Usage(prompt_tokens=0, completion_tokens=0)
    model_id = f"{name} (reference agent: no model, no tokens)"
    if isinstance(action, TextAnswer):
        return ModelTurn(text=action.text, usage=usage, finish_reason="stop", model_id=model_id)
    # a native-mode call is a structured call, as a server returns it; in prompt mode it is marked
    # as the agent's own, not as one of the text parser's modes
    mode = "native" if tool_mode == "native" else "agent"
    call = ToolCall(name=action.name, arguments=dict(action.arguments), id=action.id or f"call_{0}", parse_mode=mode)
    return ModelTurn(text="", tool_calls=[call], usage=usage, finish_reason="tool_calls", model_id=model_id)


class GoldAgent(ReferenceAgent):
    """Plays the reference, one action per turn, whatever it is told; after its end it repeats the
    last action (a won episode never gets there)."""

    kind = "gold"
    description = "plays each task's known solution (walkthrough, gold calls, slot answers)"

    def decide(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], reference: list[Action], decoding: Decoding
    ) -> Action:
        return reference[min(self.turns, len(reference) - 1)]
