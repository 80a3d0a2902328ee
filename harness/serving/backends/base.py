"""The one narrow interface every model backend implements."""

from __future__ import annotations

from typing import Any, Protocol

from envs.contract import Decoding, Env, ToolSpec
from harness.types import ModelTurn, ToolMode


class Backend(Protocol):
    """`generate` returns one ModelTurn or raises HarnessError."""

    name: str

    async def generate(
        self,
        messages: list[dict[str, Any]],
        tools: list[ToolSpec],
        decoding: Decoding,
        tool_mode: ToolMode,
    ) -> ModelTurn: ...

    async def model_id(self) -> str | None: ...

    def for_episode(self, env: Env) -> Backend:
        """The player of one episode: a model backend is itself (shared by concurrent workers); a
        reference agent (harness.agents) a fresh agent that reads this env's reference()."""
        ...

    async def aclose(self) -> None: ...
