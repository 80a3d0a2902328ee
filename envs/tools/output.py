"""The output contract: what a tool puts back into the model's context, a failure included.

Every tool call that passes the input contract returns one `ToolOutput`, serialised as JSON.
A backend fault never raises into the episode loop: it becomes `status="error"` with either the
exception's text (`fault_shape="raw"`, what an unguarded tool leaks) or an RFC 9457 problem
details object (`fault_shape="problem"`) extended with the fields a runtime decides on.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

FaultShape = Literal["raw", "problem"]


class ProblemDetails(BaseModel):
    """RFC 9457 problem details, with the agent-facing extension members."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="URI that identifies the problem type")
    title: str
    status: int
    detail: str
    instance: str | None = None
    retryable: bool
    retry_after: int | None = Field(None, description="seconds to wait before a retry can succeed")
    owner_action_required: bool


class ToolOutput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    status: Literal["ok", "error"]
    data: Any = None
    error: ProblemDetails | str | None = None

    def text(self) -> str:
        """Compact JSON; a problem keeps `retry_after: null` (it says "no point in waiting")."""
        body = self.model_dump(mode="json", exclude_none=True)
        if isinstance(self.error, ProblemDetails):
            body["error"] = self.error.model_dump(
                mode="json", exclude={"instance"} if self.error.instance is None else None
            )
        return json.dumps(body, ensure_ascii=False, separators=(",", ":"))


def ok(data: Any) -> ToolOutput:
    return ToolOutput(status="ok", data=data)
