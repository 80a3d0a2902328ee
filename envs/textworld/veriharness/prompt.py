"""The artifact's request messages: its system line and its worker prompt with a context pack.

A call's prompt is built from the task context alone, plus, on a retry, the feedback about the
immediately previous attempt, shown twice: as the "Repair guidance" bullets and as
`retry_feedback` at the end of the pack's `current_state`. The pack is printed as indented JSON
with its non-ASCII characters as they are, which is what the artifact's pydantic dump printed.
"""

from __future__ import annotations

import json
from typing import Any

from envs.textworld.manifest import GameEntry
from envs.textworld.veriharness import stimuli as s

_SCHEMA: dict[str, Any] = json.loads(s.OUTPUT_SCHEMA_JSON)


def task_id(seed: int) -> str:
    return f"{s.TASK_ID_PREFIX}{seed}"


def budget_dict(budget: int) -> dict[str, int]:
    return {
        "max_retries": budget - 1,
        "veriharness_k": s.VERIHARNESS_K,
        "max_leaf_calls_per_task": budget,
        "max_tokens_per_task": s.MAX_TOKENS_PER_TASK,
        "max_wall_time_seconds": s.MAX_WALL_TIME_SECONDS,
    }


def context_pack(entry: GameEntry, variant: str, max_steps: int, budget: int, feedback: list[str]) -> dict[str, Any]:
    state: dict[str, Any] = {
        "task_family": s.TASK_FAMILY,
        "objective": entry.objective,
        "initial_description": entry.description,
        "initial_inventory": entry.inventory,
        "max_steps": max_steps,
    }
    if feedback:
        state["retry_feedback"] = list(feedback)
    return {
        "task_id": task_id(entry.seed),
        "variant": variant,
        "objective": s.TASK_DESCRIPTION,
        "current_state": state,
        "accepted_facts": list(s.ACCEPTED_FACTS),
        "rejected_facts": [],
        "constraints": list(s.CONSTRAINTS),
        "distractors": [],
        "output_schema": _SCHEMA,
        "budget": budget_dict(budget),
    }


def _repair_block(feedback: list[str]) -> str:
    if not feedback:
        return ""
    return "\n".join([s.REPAIR_HEADER, *(f"- {item}" for item in [*feedback, *s.REPAIR_TAIL])])


def user_prompt(pack: dict[str, Any], attempt: int) -> str:
    feedback = pack["current_state"].get("retry_feedback", [])
    attempt_block = "\n".join(
        [
            s.ATTEMPT_HEADER,
            f"- attempt: {attempt}",
            f"- candidate: {s.CANDIDATE_ID}",
            f"- candidate strategy: {s.TEXTWORLD_STRATEGY}",
            f"- {s.NO_REPEAT}",
        ]
    )
    rules = "\n".join([s.PREAMBLE_HEAD, s.CLAIMS_NOT_REQUIRED, s.PREAMBLE_TAIL])
    blocks = [
        rules,
        s.TEXTWORLD_GUIDANCE,
        attempt_block,
        _repair_block(feedback),
        f"{s.CONTEXT_PACK_HEADER}\n{json.dumps(pack, indent=2, ensure_ascii=False)}\n",
    ]
    return "\n\n".join(blocks)


def messages(
    entry: GameEntry, variant: str, max_steps: int, budget: int, attempt: int, feedback: list[str]
) -> list[dict[str, str]]:
    pack = context_pack(entry, variant, max_steps, budget, feedback)
    return [{"role": "system", "content": s.SYSTEM}, {"role": "user", "content": user_prompt(pack, attempt)}]


def words(text: str) -> int:
    """The paper's cost proxy: whitespace words of the user prompt."""
    return len(text.split())
