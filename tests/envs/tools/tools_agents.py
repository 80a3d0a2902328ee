"""Scripted agents for the tool suites (test doubles): they know each task's gold calls."""

from __future__ import annotations

import json
from typing import Any

from envs.contract import Accepted, EpisodeContext, Outcome, TextAnswer, ToolCall, Violation


def ask_text(env: Any, slot: str) -> str:
    words = env.case.customer.words[slot]
    return f"Could you tell me the {words[-1]}? ({words[0]})"


def fault_of(outcome: Outcome) -> Any:
    if not isinstance(outcome, Accepted) or outcome.done:
        return None
    try:
        body = json.loads(outcome.observation)
    except ValueError:
        return None
    return body.get("error") if isinstance(body, dict) and body.get("status") == "error" else None


def _wait_for(error: Any) -> int | None:
    """Seconds to wait before a retry; None when the fault is permanent."""
    if isinstance(error, dict):
        return None if not error["retryable"] else max(1, error["retry_after"] or 0)
    if "401" in error:
        return None
    return 60 if ("429" in error or "503" in error) else 1


def solve(env: Any, ask: bool = True, confirm: bool = True, max_steps: int = 40) -> list[Outcome]:
    """Ask for every withheld slot, confirm a correction, then make the gold calls, waiting out
    retryable faults and reporting a permanent one. Returns every outcome."""
    env.reset()
    outcomes: list[Outcome] = []

    def send(action: Any) -> Outcome:
        out = env.submit(action)
        outcomes.append(out)
        assert len(outcomes) <= max_steps, "the scripted agent is looping"
        return out

    customer = env.case.customer
    if ask:
        for slot in list(customer.withheld):
            if not customer.store.revealed(slot):
                send(TextAnswer(text=ask_text(env, slot)))
    c = customer.correction
    if confirm and c is not None and c.pending:
        send(TextAnswer(text=f"Just to confirm, is it {c.value}?"))
    for call in env.case.gold_calls:
        while True:
            out = send(call)
            if isinstance(out, Violation) or out.done:
                return outcomes
            error = fault_of(out)
            if error is None:
                break
            delay = _wait_for(error)
            if delay is None:
                send(TextAnswer(text="Sorry, I cannot complete this now; a colleague has to restore the access."))
                return outcomes
            send(ToolCall(name="wait", arguments={"seconds": delay}))
    last = outcomes[-1] if outcomes else None
    if not isinstance(last, Accepted) or not last.done:
        send(TextAnswer(text="I have checked it for you."))
    return outcomes


def find_env(suite: Any, options: Any, pred: Any = None, **params: Any) -> Any:
    """The env of the first task whose params match (and that passes `pred(env)`), reset."""
    for task in suite.tasks(options):
        if all(task.params.get(k) == v for k, v in params.items()):
            env = suite.make(task, options, EpisodeContext(budget=4))
            env.reset()
            if pred is None or pred(env):
                return env
    raise LookupError(f"no task of {suite.name} with {params}")


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def every_task_solved(suite: Any, options: Any, kinds: set[str]) -> tuple[list[Any], list[str]]:
    """The suite's 200 tasks: deterministic, of every kind, each opening stable and each won by
    its gold calls. Returns the tasks and their openings' customer messages."""
    tasks = suite.tasks(options)
    assert len(tasks) == 200 and len({t.task_id for t in tasks}) == 200 and suite.tasks(options) == tasks
    assert {t.params["kind"] for t in tasks} == kinds
    openings = []
    for task in tasks:
        env = suite.make(task, options, EpisodeContext(budget=4))
        first = env.reset()
        assert env.reset() == first
        openings.append(first.messages[-1]["content"])
        last = solve(env)[-1]
        assert isinstance(last, Accepted) and last.won, task.task_id
    return tasks, openings
