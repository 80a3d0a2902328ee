"""Run options of the tool suites (the condition axes of the synthetic tasks).

contract: `normalizing` repairs human notation in the before phase ("•• 4417", "вчера",
  "1 200,50 ₽", "Эконом"); `strict` turns the before phase off, so the same input is rejected
  with feedback, and users measure what normalisation saves.
schema: `open` sends schemas without lists of allowed values (they exist only in the validator);
  `enum` sends them (Literal members and the task's state: cards, flights, rooms, zones).
fault_shape: how a backend fault reaches the model: `problem` (RFC 9457 problem details with
  `retryable`, `retry_after`, `owner_action_required`; the seed's recommended output contract,
  so it is the default) or `raw` (the exception's text). The conditions `fault_raw` and
  `fault_problem` set it.
faults: the share of tasks that carry one seeded backend fault (0 turns the schedule off; True
  means 1.0). Default 0.25, so the fault arms differ out of the box; the draw is per task, so the
  faulted tasks at a lower rate are a subset of those at a higher one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from envs.tools.output import FaultShape
from envs.tools.tooling import SchemaView


class ToolsOptions(BaseModel):
    # `schema` is the option's name; the attribute is `schema_view` because `schema` shadows a
    # BaseModel method. Dumps use the alias so the runner's re-validation round-trips.
    model_config = ConfigDict(extra="forbid", populate_by_name=True, serialize_by_alias=True)

    n_tasks: int = Field(200, ge=1, le=100_000)
    contract: Literal["normalizing", "strict"] = "normalizing"
    schema_view: SchemaView = Field("open", alias="schema")
    fault_shape: FaultShape = "problem"
    faults: float = Field(0.25, ge=0.0, le=1.0)

    def recorded(self) -> dict[str, object]:
        return self.model_dump(by_alias=True)
