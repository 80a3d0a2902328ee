"""The suite check: before a grid plays, `agent:gold` plays each planned task (no model, seconds).

A task the task's own gold solution cannot win is a broken suite (a plugin's validator that
rejects the gold call, a backend that raises, a success check that never holds), and every
agent's score on it would be wrong: the run stops before it starts, naming the task, the call and
what the suite answered. `run --no-suite-check` skips it; `repair-harness suites NAME --verify`
runs it alone. A check that passed is kept (harness.suite_check_cache) and not played again for
the same suite, options, tasks and code.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass

from envs import suite_entry
from envs.contract import EpisodeContext, Task, Violation
from envs.limits import MemoryLimit, TimeLimit
from harness import suite_check_cache as cache
from harness.agents.base import GoldAgent, NoReference
from harness.episodes import select_tasks
from harness.errors import SuiteCheckFailed
from harness.loop import call_env, run_episode
from harness.spec import Resolved, build_spec, resolved

# a harness error the limit on external code made (the loop writes an exception as `Name: text`)
LIMITS = (f"{TimeLimit.__name__}: ", f"{MemoryLimit.__name__}: ")


@dataclass(frozen=True)
class Verdict:
    tasks: int
    unchecked: int  # tasks that state no solution (their reference is empty)
    cached: bool = False  # a verdict kept from an earlier check of all of the same (harness.suite_check_cache)


async def check_suite(plan: Resolved, tasks: list[Task], kept: bool = True) -> Verdict:
    """Gold plays each task once; raises SuiteCheckFailed at the first it does not win. `kept`: a
    verdict kept for all of the same answers instead, and a passing one is kept (`suites --verify`
    plays every time)."""
    spec = plan.spec
    # gold reads no feedback: a condition that sets nothing in the environment and asks no review
    plain = [c for c in plan.conditions.values() if not c.sets("fault_shape") and c.review_prompt() is None]
    condition = (plain or list(plan.conditions.values()))[0]
    budget = max([*plan.budgets, suite_entry(spec.suite).budget])
    digest = cache.key(plan, tasks, condition.name, budget)
    before = cache.recall(digest) if kept else None
    if before is not None:  # passed before, for all of the same: not played again
        return Verdict(before["tasks"], before["unchecked"], cached=True)
    unchecked = 0
    for task in tasks:
        ctx = EpisodeContext(budget=budget, decoding=spec.decoding, tool_mode=spec.tool_mode, condition=condition)
        env = await call_env(plan.suite, plan.suite.make, task, plan.options, ctx)
        try:
            player = GoldAgent(env)
            result = await run_episode(env, player, ctx)
        finally:
            with contextlib.suppress(Exception):
                await call_env(env, env.close)
        if result.won:
            continue
        # a task that states no solution is unchecked; one whose draw, gold or check raised is broken
        if result.harness_error and NoReference.__name__ in result.harness_error:
            unchecked += 1
            continue
        if not result.harness_error and player.turns == 0 and _empty(env):
            unchecked += 1
            continue
        raise SuiteCheckFailed(_why(spec.suite, task, result))
    if kept:
        cache.keep(digest, {"tasks": len(tasks), "unchecked": unchecked, "suite": spec.suite})
    return Verdict(len(tasks), unchecked)


def _empty(env: object) -> bool:
    """The task states no solution; a reference that raises is the suite's bug, not an empty one."""
    try:
        return not list(env.reference())  # type: ignore[attr-defined]
    except Exception:
        return False


def _why(suite: str, task: Task, result: object) -> str:
    """The task, the gold call the suite turned down and what it answered (or the harness error)."""
    error = getattr(result, "harness_error", None)
    outcomes = getattr(result, "outcomes", [])
    transcript = getattr(result, "transcript", [])
    said = f"{suite} task {task.task_id}: its own gold solution does not win it"
    rejected = next(
        ((i, o) for i, o in enumerate(outcomes) if isinstance(o, Violation)),
        None,
    )
    if error and error.startswith(LIMITS):
        # the limit the user set (or its default) stopped gold: nothing is known about the suite
        return (
            f"{suite} task {task.task_id}: agent:gold could not be checked: {error.partition(': ')[2]}. The suite "
            "was not found broken: raise the limit, or skip the check with --no-suite-check"
        )
    if error:
        said += f"; {error}"
    elif rejected is not None:
        i, v = rejected
        calls = transcript[i]["answer"]["tool_calls"] if i < len(transcript) else []
        call = json.dumps(calls[0], ensure_ascii=False)[:200] if calls else "(no call)"
        said += f"; the suite rejected gold call {i + 1} {call}: {v.code} at {v.location}: {v.message}"
    else:
        said += f" (it ended: {getattr(result, 'spent', '?')} calls, not won)"
    return said + ". The suite is broken, and no agent's score on it would be right (skip: --no-suite-check)"


def verify_text(suite: str, plugins: list[str]) -> str:
    """`suites NAME --verify`: the check alone, on every task of the suite at its defaults."""
    spec = build_spec({"suite": suite, "models": ["agent:gold"], "conditions": ["raw"], "plugins": plugins})
    plan = resolved(spec)
    verdict = asyncio.run(check_suite(plan, select_tasks(plan), kept=False))
    won = verdict.tasks - verdict.unchecked
    unchecked = f"; {verdict.unchecked} state no solution, unchecked" if verdict.unchecked else ""
    return f"{suite}: agent:gold wins {won} of {verdict.tasks} tasks{unchecked}"
