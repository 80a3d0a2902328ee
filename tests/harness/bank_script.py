"""Scripted agents for the bank family: they know the gold call of each task (test doubles)."""

from __future__ import annotations

from typing import Any

from conditions.arbiters import REVIEW_PROMPT, WAIT_PROMPT
from envs import get_suite
from envs.contract import EpisodeContext
from tests.scripted_server import Reply, call, tagged

REVIEWS = {REVIEW_PROMPT, WAIT_PROMPT}

SUITE = get_suite("bank-disputes")
OPTIONS = SUITE.options_model()


def gold_by_message(n: int = 200) -> dict[str, dict[str, Any]]:
    """customer message -> gold arguments, for the first n tasks."""
    out = {}
    for task in SUITE.tasks(OPTIONS)[:n]:
        # the authoring env: its state (the task's Desk) is no part of the Env protocol
        env: Any = SUITE.make(task, OPTIONS, EpisodeContext(budget=4))
        opening = env.reset()
        w = env.state.world
        op = w.op(w.target)
        out[opening.messages[-1]["content"]] = {
            "card_last4": op.card_last4,
            "operation_date": op.day.isoformat(),
            "amount": str(op.amount),
            "reason": w.reason,
            "original_operation_id": w.original,
        }
    return out


GOLD = gold_by_message()


def customer_message(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"] if m["role"] == "user")


def answer(args: dict[str, Any], mode: str) -> Reply:
    if mode == "native":
        return Reply(text=None, tool_calls=[call("open_dispute", args)])
    return Reply(text=tagged("open_dispute", args))


def failed_attempts(body: dict[str, Any]) -> int:
    """Feedback messages so far: tool results, and user turns after the first that are not reviews."""
    msgs = body["messages"]
    first = next(i for i, m in enumerate(msgs) if m["role"] == "user")
    return sum(
        m["role"] == "tool" or (m["role"] == "user" and i > first and m["content"] not in REVIEWS)
        for i, m in enumerate(msgs)
    )


def repairing(mode: str, wrong: dict[str, Any], fail_times: int = 1):
    """Wrong for the first `fail_times` attempts, then the gold call. Asked to review its own
    call, it repeats it unchanged (a model that does not catch its own error)."""

    def responder(body: dict[str, Any]) -> Reply:
        gold = GOLD[customer_message(body)]
        wrong_now = failed_attempts(body) < fail_times
        return answer({**gold, **wrong} if wrong_now else gold, mode)

    return responder
