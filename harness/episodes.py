"""A run's grid of episodes: the tasks a spec selects, each episode's key, task and condition (a
fork's: its source's calls to replay), the grid counted before it is made, and this machine's shard."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich.console import Console
from rich.markup import escape

from envs.contract import Condition, Task
from envs.errors import UnknownName
from harness import fork, shards
from harness.replay import Replay
from harness.run_spec import RunSpec
from harness.spec import Resolved, check_grid_size
from harness.types import EpisodeKey


def select_tasks(plan: Resolved) -> list[Task]:
    spec = plan.spec
    tasks = plan.suite.tasks(plan.options)
    if spec.task_ids:
        known = {t.task_id: t for t in tasks}
        missing = [t for t in spec.task_ids if t not in known]
        if missing:
            raise UnknownName(f"task id of suite {spec.suite}", missing[0], list(known)[:20] + ["..."])
        tasks = [known[t] for t in spec.task_ids]
    if spec.tasks is not None:
        tasks = tasks[: spec.tasks]
    return tasks


@dataclass(frozen=True)
class Episode:
    """One episode of the grid: its key (what identifies it in the records), its task and the
    condition it plays under, resolved once when the spec loaded (never looked up again by name)."""

    key: EpisodeKey
    task: Task
    condition: Condition
    # a fork's (harness.fork): the source's calls to replay, and what its record keeps of them
    replay: Replay | None = None
    origin: dict[str, Any] | None = None
    # a fork's: the calls it may play after its fork point, where the key's budget is the grid's
    # value (`--budget`, else the source's budget) and this what the source had left there
    repair_budget: int | None = None


def expand(plan: Resolved, tasks: list[Task]) -> list[Episode]:
    """Task-major order, so an interrupted run has whole tasks across conditions."""
    spec = plan.spec
    return [
        Episode(
            EpisodeKey(suite=spec.suite, task_id=t.task_id, model=m, condition=c, budget=b, sample_seed=s, constrain=k),
            t,
            plan.conditions[c],
        )
        for t in tasks
        for m in spec.models
        for k in spec.constrain
        for b in plan.budgets
        for s in spec.sample_seeds
        for c in spec.conditions
    ]


def shard(spec: RunSpec, episodes: list[Episode]) -> list[Episode]:
    """This machine's part of the grid (`--shard I/N`), or all of it."""
    if not spec.shard:
        return episodes
    index, count = shards.parse(spec.shard)
    return [e for e in episodes if shards.shard_of(e.key, count) == index]


async def grid_of(plan: Resolved, tasks: list[Task], console: Console) -> tuple[list[Episode], dict[str, int]]:
    """The spec's episodes (a fork's: one per fork point, condition, model and seed, its points'
    states rebuilt first) and the fork points refused, by reason; the grid is counted first."""
    spec = plan.spec
    size = len(tasks) * len(spec.models) * len(spec.constrain) * len(plan.budgets)
    size *= len(spec.sample_seeds) * len(spec.conditions)
    if spec.fork is None:  # a fork's grid is counted by its fork points (fork.plan)
        check_grid_size(size)
        return expand(plan, tasks), {}
    planned, reasons = await fork.plan(plan, tasks)
    episodes = [Episode(p.key, p.task, p.condition, p.replay, p.origin, p.repair_budget) for p in planned]
    console.print(
        f"{len({e.key.fork for e in episodes})} fork points rebuilt: every replayed call's outcome as recorded, "
        "the failed call's included",
        highlight=False,
    )
    for reason, n in reasons.most_common():
        console.print(f"{n} fork point{'s' if n != 1 else ''} refused: {escape(reason)}", highlight=False)
    return episodes, dict(reasons)
