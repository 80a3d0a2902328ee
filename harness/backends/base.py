"""The one narrow interface every model backend implements."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from harness.types import ModelTurn

from envs.contract import Decoding, ToolSpec

ToolMode = Literal["native", "prompt"]


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

    async def aclose(self) -> None: ...
