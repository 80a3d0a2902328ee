"""Expand a spec into episodes, skip those already recorded, and play the rest (harness.session):
one record per finished episode."""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path

from rich.console import Console

from envs.errors import UserError
from harness import shards
from harness.agents.base import PREFIX as AGENT_PREFIX
from harness.episodes import expand, grid_of, select_tasks, shard
from harness.printable import console as printable_console
from harness.progress import _progress
from harness.redact import Redactor
from harness.run_spec import RunSpec
from harness.rundir.store import RunDir
from harness.serving import Plan, plan_servers
from harness.session import RunSummary, play_pending
from harness.spec import resolved
from harness.suite_check import check_suite
from harness.types import EpisodeKey
from results import rundir

__all__ = ["play", "run", "select_tasks", "expand", "RunSummary", "_progress"]


def start_line(spec: RunSpec) -> str:
    """The run's first line: where it writes, what it plays, and a condition the grid named twice."""
    also = "".join(f"; {b} is {a} by another name: played once, as {a}" for b, a in spec.also_named.items())
    protocol = spec.env_options.get("protocol")
    if protocol == "bfcl":  # which of BFCL's handlers the served models meet
        handler = "its FC handler" if spec.tool_mode == "native" else "its prompting handler"
        protocol = f"; protocol bfcl: {handler} (--tool-mode {spec.tool_mode})"
    else:
        protocol = f"; protocol {protocol}" if protocol else ""
    return (
        f"run → {spec.out}  ({spec.suite}; models {', '.join(spec.models)}; conditions {', '.join(spec.conditions)}"
        f"{protocol}{also})"
    )


def _recorded(spec: RunSpec) -> set[str]:
    """The episode ids the run directory already holds (read, never written)."""
    records = rundir.records_file(spec.out)
    done: set[str] = set()
    if not records.exists():
        return done
    lines, _ = rundir.read_lines(records)
    for _, line in lines:
        try:
            done.add(EpisodeKey.of(json.loads(line)).id())
        except (ValueError, TypeError):
            continue
    return done


def dry_plan(spec: RunSpec) -> Plan:
    """The servers' plan `run` would follow now, for the models with episodes left in the run
    directory (read, never written: no lock, no folder)."""
    if not rundir.records_file(spec.out).exists():
        return plan_servers(spec, list(spec.models))
    left = {key.model for key in dry_episodes(spec)[1]}
    return plan_servers(spec, [m for m in spec.models if m in left])


def dry_episodes(spec: RunSpec) -> tuple[int, list[EpisodeKey]]:
    """The grid's episodes (this shard's) and the keys of those left to play, for `--dry-run`."""
    plan = resolved(spec)
    keys = [e.key for e in shard(spec, expand(plan, select_tasks(plan)))]
    done = _recorded(spec)
    return len(keys), [k for k in keys if k.id() not in done]


def dry_count(spec: RunSpec) -> dict[str, int]:
    """The grid's episodes, those left to play, and of those the models' (a reference agent takes no time)."""
    total, left = dry_episodes(spec)
    models = sum(not str(k.model).startswith(AGENT_PREFIX) for k in left)
    return {"grid": total, "to_play": len(left), "models_to_play": models}


def dry_said(c: dict[str, int]) -> str:
    """`dry_count` in a sentence, with what is known of the time: `run` measures it as it plays."""
    agents = c["to_play"] - c["models_to_play"]
    return (
        f"{c['grid']} episodes in the grid, {c['to_play']} to play"
        + (f" ({agents} of them reference agents', which take no time)" if agents else "")
        + (
            f"; the models' {c['models_to_play']}: `run` says how long they take after their first 3 (the "
            "embedded model took about 1 to 3 min an episode on 2 cores in the demo, which measures its own)"
            if c["models_to_play"]
            else ""
        )
    )


def play(spec: RunSpec, console: Console | None = None, **how: bool) -> RunSummary:
    """`run` on a fresh event loop (`how`: run's switches): what the CLI and the benchmarks call.
    asyncio's own loop: uvloop was measured slower here (benchmarks/throughput.py at C=32, L=50 ms:
    370-410 vs 430-450 calls/s)."""
    return asyncio.run(run(spec, console, **how))


async def run(
    spec: RunSpec,
    console: Console | None = None,
    retry_errors: bool = False,
    preflight: bool = False,
    suite_check: bool = False,
    plugin_changed: bool = False,
) -> RunSummary:
    """Play the spec's episodes not yet recorded. `preflight`: check each served model before
    its first episode (harness.serving.preflight); a failed check stops the run. `suite_check`: first,
    gold plays each task (harness.suite_check); a task it cannot win stops the run."""
    console = console or printable_console(stderr=True)
    plan = resolved(spec)  # the run's one resolution, handed down
    tasks = select_tasks(plan)
    if suite_check and spec.fork is None:  # a fork checks more: every replayed outcome (harness.fork)
        await check_suite(plan, tasks)
    if spec.tasks is not None and len(tasks) < spec.tasks:
        among = " among the --task-ids given" if spec.task_ids else ""
        draws = "n_tasks" in plan.suite.options_model.model_fields and not spec.task_ids
        console.print(
            f"{spec.tasks:,} tasks asked for; {spec.suite} has {len(tasks)}{among}: all {len(tasks)} play"
            + (f" (--env n_tasks={spec.tasks} draws more)" if draws else ""),
            highlight=False,
        )
    episodes, refused = await grid_of(plan, tasks, console)
    after_start = None
    if spec.shard:  # this machine's part of the grid; the folder's plan.json names every part
        index, count = shards.parse(spec.shard)
        if count > len(episodes):  # checked before plan.json lists a part for every one of them
            raise UserError(
                f"--shard {index}/{count}: {count:,} parts for a grid of {len(episodes):,} episodes; "
                f"give at most {len(episodes):,} parts"
            )
        entries = shards.plan_entries([e.key for e in episodes], count, spec.identity())
        after_start = functools.partial(shards.write_plan, Path(spec.out).parent, entries, index)
    episodes = shard(spec, episodes)
    store = RunDir(spec.out, Redactor.from_env(spec.api_key_env, public=(spec.suite, *spec.models, *spec.conditions)))
    done = store.open(spec, plan.plugins, plugin_changed)
    if store.lost_transcripts:
        console.print(
            f"{store.lost_transcripts} records had lost their transcripts (a crash before they reached the disk): "
            "their episodes play again",
            highlight=False,
        )
    try:
        if retry_errors:
            done -= store.error_keys()
        pending = [e for e in episodes if e.key.id() not in done]
        summary = RunSummary(total=len(episodes), skipped=len(episodes) - len(pending), refused=refused)
        if spec.fork is not None:
            summary.fork_cells = shards.cells(e.key for e in episodes)
        summary.errors_on_record = 0 if retry_errors else store.errors_on_record()
        if pending:
            await play_pending(plan, pending, store, summary, console, retry_errors, preflight, after_start)
        elif retry_errors:
            store.move_errors_aside()
        return summary
    finally:
        store.close()
