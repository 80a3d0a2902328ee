"""The artifact's answer envelope (LeafOutput) and how an answer text becomes one.

The model answers a LeafOutput object; `answer` is a string holding `{"commands": [...]}`. As in
the artifact's leaf runner: the text must be JSON as a whole (a markdown fence makes it
unparseable, unless fence stripping is switched on, which the paper did not do); an `answer`
that is not a string is re-encoded as sorted-key JSON before validation; anything that does not
validate becomes an empty envelope with the task's own id and a `parse_error` in
self_assessment, which the schema gate turns into its failures. Model output is only ever
parsed as JSON and validated; nothing of it is executed or written to disk.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from envs.textworld.plan import find_fence


class EvidenceRef(BaseModel):
    source: str
    locator: str = ""
    quote: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class Claim(BaseModel):
    claim: str
    evidence_refs: list[EvidenceRef] = Field(default_factory=list)
    confidence: float = 0.5
    metadata: dict[str, Any] = Field(default_factory=dict)


class LeafOutput(BaseModel):
    """The envelope, validated with pydantic's default (lax) rules, as the artifact's model was."""

    task_id: str
    answer: str
    artifacts: list[str] = Field(default_factory=list)
    claims: list[Claim] = Field(default_factory=list)
    self_assessment: dict[str, Any] = Field(default_factory=dict)
    done: bool = False


@dataclass(frozen=True)
class Parsed:
    leaf: LeafOutput
    fenced: bool  # the text held a markdown fence (counted whether or not it was stripped)
    parse_error: str | None = None


def parse_leaf(text: str, task_id: str, fence_strip: bool = False) -> Parsed:
    fence = find_fence(text) if fence_strip else None
    fenced = "```" in text
    body = fence.group(1) if fence is not None else text
    try:
        data: Any = json.loads(body)
        if isinstance(data, dict) and "answer" in data and not isinstance(data["answer"], str):
            data = {**data, "answer": json.dumps(data["answer"], sort_keys=True)}
        return Parsed(LeafOutput.model_validate(data), fenced=fenced)
    except (ValueError, ValidationError, TypeError, RecursionError) as exc:
        # RecursionError: a pathologically nested answer (the artifact would have crashed on it);
        # here it is one more unparseable answer
        error = str(exc) or type(exc).__name__
        leaf = LeafOutput(task_id=task_id, answer="", self_assessment={"parse_error": error})
        return Parsed(leaf, fenced=fenced, parse_error=error)
