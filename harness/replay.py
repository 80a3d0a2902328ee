"""What the one loop needs to fork an episode: the source's recorded answers up to its fork point,
replayed in place of a model, and the recorded outcomes the rebuilt environment must give again.

A fork (harness.fork) plays a recorded episode's calls up to and including its failed call through
the same loop, on a fresh environment: the environment reaches the source's exact state by being
given the same actions, the conversation is the source's own (the same answers, the same replies,
feedback rendered by the source's condition), and every outcome is checked against the record.
The fork point's feedback is then rendered by the fork's own condition and the agent plays on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from envs.contract import Decoding, Env, ToolSpec
from harness.errors import HarnessError
from harness.serving import Backend, ToolMode
from harness.types import ModelTurn


class StateMismatch(HarnessError):
    """The rebuilt environment answered a replayed call otherwise than the source recorded: the
    fork point's state cannot be rebuilt (never the agent's failure)."""


class Unforkable(HarnessError):
    """An environment whose episodes cannot be continued under another condition."""


class PrefixEnd(HarnessError):
    """A replay with no player behind it asked for a call past its prefix (`harness.fork` checks
    fork points this way: the state is rebuilt, nothing is played)."""


@runtime_checkable
class Observer(Protocol):
    """A player with a state of its own (a reference agent) takes over a conversation it did not
    play: it is shown each replayed call, the messages sent and the answer recorded, and at the
    fork point (the last replayed answer, which failed) the index of its failed call (`failed`;
    None before it)."""

    def observe(
        self,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        decoding: Decoding,
        turn: ModelTurn,
        failed: int | None = None,
    ) -> None: ...


@dataclass(frozen=True)
class Replay:
    """A fork's source: the recorded answers of its first `calls` model calls (the last one is the
    failed call), each call's recorded outcome (None for a review call's question), the source's
    condition (resolved as the source played it) and the source's budget."""

    turns: list[ModelTurn]
    outcomes: list[dict[str, Any] | None]
    before: Any  # envs.contract.Condition
    budget: int
    at: int | None = None  # the failed call within the last answer (None: not known, or no call)

    @property
    def calls(self) -> int:
        return len(self.turns)

    def check(self, call: int, outcome: dict[str, Any]) -> None:
        recorded = self.outcomes[call]
        if recorded is not None and _canonical(recorded) != _canonical(outcome):
            raise StateMismatch(f"state not rebuilt: call {call}: {_difference(recorded, outcome)}")


def _canonical(outcome: dict[str, Any]) -> str:
    return json.dumps(outcome, sort_keys=True, ensure_ascii=False, default=str)


def _difference(recorded: dict[str, Any], rebuilt: dict[str, Any]) -> str:
    fields = sorted({*recorded, *rebuilt})
    differ = [f for f in fields if _canonical({"v": recorded.get(f)}) != _canonical({"v": rebuilt.get(f)})]
    name = differ[0] if differ else "?"
    return (
        f"the rebuilt environment's outcome differs from the recorded one in {', '.join(differ)} "
        f"({name}: recorded {str(recorded.get(name))[:80]!r}, rebuilt {str(rebuilt.get(name))[:80]!r})"
    )


class Replaying:
    """A Backend that answers with the recorded turns first, then hands over to `then` (None: a
    check that plays nothing past the prefix)."""

    def __init__(self, replay: Replay, then: Backend | None):
        self.name = then.name if then is not None else "replay"
        self._turns = replay.turns
        self._at = replay.at
        self._then = then
        self._next = 0

    async def generate(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], decoding: Decoding, tool_mode: ToolMode
    ) -> ModelTurn:
        if self._next < len(self._turns):
            turn = self._turns[self._next]
            self._next += 1
            if self._then is not None and isinstance(self._then, Observer):  # a protocol's isinstance: 20 us
                # at the fork point: which of its calls failed (the first where the record does not
                # say: an answer of one call, or its text); the player is told, never left to guess
                # from the feedback's wording (BFCL's own text reads like a tool's answer)
                failed = (self._at or 0) if self._next == len(self._turns) else None
                self._then.observe(messages, tools, decoding, turn, failed)
            return turn
        if self._then is None:
            raise PrefixEnd("the replay ended at its fork point")
        return await self._then.generate(messages, tools, decoding, tool_mode)

    async def model_id(self) -> str | None:
        return None if self._then is None else await self._then.model_id()

    def for_episode(self, env: Env) -> Backend:
        return self

    async def aclose(self) -> None:
        return None
