"""The harness's record types: the episode key, a model turn, a call's log, the record (the run's
spec is `harness.run_spec`).

The env-facing contract types (ToolCall, ToolSpec, Violation, Accepted, ...) are in
`envs.contract`, because `envs/` and `conditions/` may not import `harness`: import them from there.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from envs.contract import BudgetUnit, ToolCall, valid_unicode

# how tools reach the model: as the server's own tool calls, or written into the prompt; here, not
# in serving, so that the players (harness.agents), which serving loads as a model kind, need not
# import serving for it
ToolMode = Literal["native", "prompt"]

SCHEMA_VERSION = 1


class KeyFields(BaseModel):
    """What identifies an episode: declared once, for the key and for the record that flattens it."""

    suite: str
    task_id: str
    model: str
    condition: str
    budget: int
    sample_seed: int
    # decoding constrained by the server (--constrain); "none" for records from before the axis
    constrain: Literal["none", "json", "schema"] = "none"
    # a fork's point (harness.fork): "<source run id>:<source episode slug>:<call index>"; None
    # (left out of the record) for an episode played from its start
    fork: str | None = None


class EpisodeKey(KeyFields):
    model_config = ConfigDict(frozen=True)

    def id(self) -> str:
        # an unconstrained key keeps the id it had before the axis existed: old runs resume
        values = self.model_dump()
        if values["constrain"] == "none":
            del values["constrain"]
        if values["fork"] is None:
            del values["fork"]
        return "|".join(str(v) for v in values.values())

    @classmethod
    def of(cls, row: dict[str, Any]) -> EpisodeKey:
        """The key of a record read back as a dict (a field a record predates takes its default)."""
        return cls(**{k: row[k] for k in cls.model_fields if k in row})

    def slug(self) -> str:
        return hashlib.sha256(self.id().encode()).hexdigest()[:20]


class Usage(BaseModel):
    """Token counts as the server reported them; None = the server sent no usage (unknown, never 0)."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None

    @property
    def known(self) -> bool:
        return self.prompt_tokens is not None and self.completion_tokens is not None


class ModelTurn(BaseModel):
    """One model call's answer, with its cost."""

    text: Annotated[str, BeforeValidator(valid_unicode)] = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_s: float = 0.0
    finish_reason: str | None = None
    # why a tool call was expected in the text but none could be read from it
    parse_error: str | None = None
    # the answer was wrapped in a markdown fence
    fenced: bool = False
    truncated: bool = False
    model_id: str | None = None
    # what a server said instead of an answer when it refuses (OpenAI's `message.refusal`)
    refusal: str | None = None
    # the assistant message as the server sent it, kept where the protocol resends it so
    # (Decoding.reading "bfcl": BFCL's runner appends the SDK's message object to its history)
    message: dict[str, Any] | None = None


class CallLog(BaseModel):
    """One model call inside an episode, as recorded."""

    kind: Literal["action", "review"]
    # None: the server reported no usage for this call
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    finish_reason: str | None = None
    prompt_words: int
    parse_modes: list[str] = Field(default_factory=list)
    fenced: bool = False
    truncated: bool = False
    outcome: str  # accepted | won | lost | done | <violation code> | review | harness_error
    # what the call submitted, as a short hash of its canonical JSON (tool name + arguments, or
    # the text of an answer without a call: `harness.loop.signature`); equal signatures are
    # identical calls. repeats_rejected: the same as a call rejected earlier in the episode
    signature: str | None = None
    repeats_rejected: bool = False
    # the names of the tools the answer called, in order ([]: an answer in text, or none read);
    # what the "after an error" table tells a retry of the same function from another one by
    tools: list[str] = Field(default_factory=list)
    # each action's own outcome, in order (an outcome label or a violation code; `not_executed`
    # for one the answer's earlier rejection or the budget stopped): which call of an answer
    # failed, and which repaired it. [] in records older than it
    call_outcomes: list[str] = Field(default_factory=list)
    # each action's own signature (`harness.loop.signature` of it alone): a fork tells by it
    # whether its repairing call is one of the task's reference calls
    call_signatures: list[str] = Field(default_factory=list)


# the record's fields only a fork has
FORK_FIELDS = (
    "fork",
    "fork_of",
    "repaired_next",
    "progressed",
    "calls_to_repair",
    "prefix_calls",
    "fork_segment",
    "segment_solved",
)

EndReason = Literal["won", "lost", "done", "budget", "harness_error"]


class EpisodeRecord(KeyFields):
    """One finished episode: one JSON line of records.jsonl. The key's fields come first,
    flattened so that a DataFrame gets one column each."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    condition_params: dict[str, Any]
    config: dict[str, Any]
    model_id: str | None = None
    # None for a harness error: such an episode says nothing about the agent
    success: bool | None
    end_reason: EndReason
    limit_hit: bool
    # the budget (the key's `budget`) in its unit, and how much of it the episode spent
    budget_unit: BudgetUnit | None = None
    budget_spent: int | None = None
    model_calls: int
    action_calls: int
    review_calls: int
    tool_calls: int
    invalid_calls: int
    first_call_valid: bool | None
    repaired: bool
    failure_codes: list[str]
    final_failure: str | None
    # sums over the calls; None when any call's usage is unknown (then usage_missing > 0)
    prompt_tokens: int | None
    completion_tokens: int | None
    usage_missing: int = 0
    prompt_words: int
    latency_s: float
    fenced_answers: int
    calls: list[CallLog]
    extra: dict[str, Any] = Field(default_factory=dict)
    harness_error: str | None = None
    transcript: str
    # a fork's (harness.fork; None, and left out of the line, for an episode played from its
    # start): the source episode (run id, key, the failed answer's index and the failed call within
    # it, that call's tool, its model and condition), whether the next answer repaired the failed
    # call (an accepted call of its tool), how many calls the repair took (None: never repaired),
    # and the calls replayed from the source that the fork did not pay for; in a task of
    # parts (envs.contract.Segmented: BFCL's turns), the part the failure was in and whether the
    # fork then solved that part
    fork_of: dict[str, Any] | None = None
    repaired_next: bool | None = None
    # the repairing call is one of the task's reference calls, or the fork solved the failed part:
    # accepted is not repaired (an offered value the backend takes but the task does not need)
    progressed: bool | None = None
    calls_to_repair: int | None = None
    prefix_calls: int | None = None
    fork_segment: int | None = None
    segment_solved: bool | None = None

    @model_serializer(mode="wrap")
    def _without_fork(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """An episode played from its start keeps the line it had before forks existed."""
        data: dict[str, Any] = handler(self)
        if self.fork is None:
            for name in FORK_FIELDS:
                data.pop(name, None)
        return data

    def key(self) -> EpisodeKey:
        return EpisodeKey(**self.model_dump(include=set(EpisodeKey.model_fields)))


def record_columns() -> dict[str, list[str]]:
    """The record's field names as `results/` reads them (results/record_columns.json, which
    results.columns loads: `results` reads records, never this module). Regenerate the file with
    `python -m harness.types > results/record_columns.json`; tests/results/test_columns.py
    fails while the two differ."""
    return {
        "key": list(KeyFields.model_fields),
        "record": list(EpisodeRecord.model_fields),
        "call": list(CallLog.model_fields),
    }


if __name__ == "__main__":
    print(json.dumps(record_columns(), indent=1))
