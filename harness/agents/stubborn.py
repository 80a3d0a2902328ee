"""`agent:stubborn`: the reader's one seeded mistake, then the rejected call again, unchanged,
until the budget ends. What agent frameworks report as "identical retries": its identical
resubmission rate is 1.0 and its recovery 0 on every suite where a mistake can be planted, which
makes it the repair-dynamics metrics' own test (tests/results/test_dynamics.py)."""

from __future__ import annotations

from typing import Any

from envs.contract import Action, Decoding, ToolSpec
from harness.agents.base import action_of
from harness.agents.reader import ReaderAgent, feedback_of
from harness.types import ModelTurn


class StubbornAgent(ReaderAgent):
    kind = "stubborn"
    description = (
        "one seeded mistake, then the rejected call again, unchanged, until the budget ends: the floor of repair"
    )

    def __init__(self, env: Any = None):
        super().__init__(env)
        self.stuck: Action | None = None
        self.last: Action | None = None

    def decide(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], reference: list[Action], decoding: Decoding
    ) -> Action:
        if self.stuck is not None:
            return self.stuck
        if self.plan is not None and feedback_of(messages)[1]:
            assert self.last is not None  # the first decide made the plan and set it
            self.stuck = self.last  # its first rejected call, from now on
            return self.stuck
        self.last = super().decide(messages, tools, reference, decoding) if self.plan is None else self._advance()
        return self.last

    def adopt(self, sent: Action) -> None:
        """Another's call at its position is the one it will send again."""
        self.last = sent

    def observe(
        self,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        decoding: Decoding,
        turn: ModelTurn,
        failed: int | None = None,
    ) -> None:
        """A fork's replayed call; at the fork point the replay says which call failed: that call
        is the one it sends from then on, whatever the feedback's wording under any condition."""
        super().observe(messages, tools, decoding, turn, failed)
        if failed is not None:
            self.stuck = action_of(turn, failed)

    def _advance(self) -> Action:
        assert self.plan is not None
        self.pos = min(self.pos + 1, len(self.plan) - 1)
        return self.plan[self.pos]
