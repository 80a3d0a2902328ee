"""The one narrow interface every model backend implements."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from harness.types import Decoding, ModelTurn, ToolSpec

ToolMode = Literal["native", "prompt"]


class HarnessError(RuntimeError):
    """An infrastructure failure (server down, retries exhausted). Never an agent failure.

    fatal: the server is gone (connection refused after retries); the run should stop.
    """

    def __init__(self, message: str, *, fatal: bool = False):
        super().__init__(message)
        self.fatal = fatal


class StartFailed(HarnessError):
    """No model server could be reached or asked which models it serves: nothing ran, nothing
    was written, and the same command can simply be run again."""


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
