"""Expand a spec into episodes, play them concurrently, append one record per finished episode."""

from __future__ import annotations

import asyncio
import contextlib
import time
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from envs.contract import Condition, EpisodeContext, Task
from envs.errors import UnknownName
from harness.agents.base import PREFIX as AGENT_PREFIX
from harness.backends.base import Backend
from harness.errors import HarnessError, StartFailed
from harness.loop import EpisodeResult, call_env, run_episode
from harness.models import ModelPool
from harness.provenance import git_commit, versions
from harness.recording import build_record
from harness.redact import Redactor
from harness.spec import Resolved, resolved
from harness.store import RunDir
from harness.types import EpisodeKey, EpisodeRecord, RunSpec


def select_tasks(spec: RunSpec) -> list[Task]:
    plan = resolved(spec)
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


def expand(spec: RunSpec, tasks: list[Task]) -> list[Episode]:
    """Task-major order, so an interrupted run has whole tasks across conditions."""
    plan = resolved(spec)
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


@dataclass
class RunSummary:
    total: int
    skipped: int
    done: int = 0
    solved: int = 0
    harness_errors: int = 0
    # harness-error records of earlier sessions that this one did not replay (no --retry-errors)
    errors_on_record: int = 0
    tokens: int = 0
    stopped: str | None = None
    served: dict[str, Any] = field(default_factory=dict)


def _config(spec: RunSpec) -> dict[str, Any]:
    return spec.model_dump(include={"decoding", "tool_mode", "text_calls", "feedback_cut", "env_options"})


def play(spec: RunSpec, console: Console | None = None, retry_errors: bool = False) -> RunSummary:
    """`run` on a fresh event loop: what the CLI and the benchmarks call. asyncio's own loop: uvloop
    was measured slower here (benchmarks/throughput.py at C=32, L=50 ms: 370-410 vs 430-450 calls/s)."""
    return asyncio.run(run(spec, console, retry_errors))


async def run(spec: RunSpec, console: Console | None = None, retry_errors: bool = False) -> RunSummary:
    console = console or Console(stderr=True)
    tasks = select_tasks(spec)
    if spec.tasks is not None and len(tasks) < spec.tasks:
        among = " among the --task-ids given" if spec.task_ids else ""
        console.print(
            f"{spec.tasks:,} tasks asked for; {spec.suite} has {len(tasks)}{among}: all {len(tasks)} play",
            highlight=False,
        )
    episodes = expand(spec, tasks)
    store = RunDir(spec.out, Redactor.from_env(spec.api_key_env))
    done = store.open(spec, resolved(spec).plugins)
    try:
        if retry_errors:
            done -= store.error_keys()
        pending = [e for e in episodes if e.key.id() not in done]
        summary = RunSummary(total=len(episodes), skipped=len(episodes) - len(pending))
        summary.errors_on_record = 0 if retry_errors else store.errors_on_record()
        if pending:
            await _play_all(spec, pending, store, summary, console, retry_errors)
        elif retry_errors:
            store.move_errors_aside()
        return summary
    finally:
        store.close()


async def _play_all(
    spec: RunSpec,
    pending: list[Episode],
    store: RunDir,
    summary: RunSummary,
    console: Console,
    retry_errors: bool,
) -> None:
    plan = resolved(spec)
    async with contextlib.AsyncExitStack() as stack:

        def warn(text: str) -> None:  # escaped: a server's words are no markup
            console.print(f"[yellow]warning:[/yellow] {escape(text)}", highlight=False, soft_wrap=True)

        pool = ModelPool(spec, stack, warn=warn)
        try:
            backends = {m: await pool.open(m) for m in spec.models}
        except HarnessError as exc:
            raise StartFailed(str(exc)) from None
        unenforced = await _unenforced(spec, plan, pending[0], backends, console)
        # only now does the run start: a failed start leaves no run.json behind
        store.start_session(
            {
                "versions": versions(),
                "git": git_commit(),
                "served": pool.served,
                **({"constrain_unenforced": unenforced} if unenforced else {}),
            },
            retry_errors,
        )
        summary.served = pool.served
        queues = {m: asyncio.Queue() for m in spec.models}
        for e in pending:
            queues[e.key.model].put_nowait(e)
        workers_n = sum(len(backends[m]) for m in spec.models) * max(1, spec.concurrency)
        console.print(
            f"{len(pending)} episodes to play"
            + (f" ({summary.skipped} already recorded)" if summary.skipped else "")
            + f", {workers_n} at a time (the time left is estimated after {ESTIMATE_AFTER})",
            highlight=False,
        )
        started = time.monotonic()
        model_episodes = sum(not e.key.model.startswith(AGENT_PREFIX) for e in pending)
        timed = 0  # the models' episodes finished so far
        with _progress(console) as progress:
            bar = progress.add_task("episodes", total=len(pending), solved="0", tokens="0")

            def count(saved: asyncio.Future[EpisodeRecord]) -> None:
                nonlocal timed
                if saved.cancelled() or saved.exception() is not None:
                    return  # the worker that awaits it raises
                record = saved.result()
                summary.done += 1
                summary.solved += bool(record.success)
                summary.tokens += (record.prompt_tokens or 0) + (record.completion_tokens or 0)
                summary.harness_errors += bool(record.harness_error)
                progress.update(bar, advance=1, solved=str(summary.solved), tokens=f"{summary.tokens:,}")
                # reference agents finish at once: the estimate counts the models' episodes only
                if record.model.startswith(AGENT_PREFIX):
                    return
                timed += 1
                left = model_episodes - timed
                if timed == ESTIMATE_AFTER and left:
                    rate = (time.monotonic() - started) / timed
                    progress.console.print(
                        f"estimate: about {_minutes(rate * left)} for the {left} episode{'s' * (left != 1)} left "
                        f"(from the first {ESTIMATE_AFTER})",
                        highlight=False,
                    )

            async def worker(model: str, backend: Backend) -> None:
                q = queues[model]
                saving = None  # this worker's previous record, in the writer's hands
                while not q.empty() and summary.stopped is None:
                    saved, fatal = await _one(spec, plan, q.get_nowait(), backend, store)
                    if fatal is not None and summary.stopped is None:
                        summary.stopped = f"the model server failed: {fatal}"
                    saved.add_done_callback(count)
                    if saving is not None:
                        # at most one record per worker waits for the writer; a failed write stops the run here
                        await saving
                    saving = saved
                if saving is not None:
                    await saving

            workers = [worker(m, b) for m in spec.models for b in backends[m] for _ in range(max(1, spec.concurrency))]
            await asyncio.gather(*workers)


async def _unenforced(
    spec: RunSpec, plan: Resolved, first: Episode, backends: dict[str, list[Backend]], console: Console
) -> dict[str, list[str]]:
    """Under `--constrain schema`, the keywords of the tools' schemas that a server cannot
    constrain (harness.backends.constrain.unenforced), said once per run: those values are
    checked by the tools only. The tools are those of the first task's opening."""
    styles = {b.constrain_style for bs in backends.values() for b in bs if getattr(b, "constrain_style", None)}
    if "schema" not in spec.constrain or not styles:
        return {}
    from harness.backends.constrain import unenforced

    ctx = EpisodeContext(budget=1, decoding=spec.decoding, tool_mode=spec.tool_mode, condition=first.condition)
    env = await call_env(plan.suite, plan.suite.make, first.task, plan.options, ctx)
    try:
        tools = (await call_env(env, env.reset)).tools
    finally:
        await call_env(env, env.close)
    out = {style: found for style in sorted(styles) if (found := unenforced(tools, style))}
    for style, found in out.items():
        console.print(
            f"constrained decoding ({style}): the server cannot enforce {', '.join(found)}; "
            "those values are checked by the tools only",
            highlight=False,
        )
    return out


async def _one(
    spec: RunSpec,
    plan: Resolved,
    episode: Episode,
    backend: Backend,
    store: RunDir,
) -> tuple[asyncio.Future[EpisodeRecord], str | None]:
    """Play one episode and hand its transcript and record to the writer: the record it appends,
    and the harness error when the model server is gone (the run stops). Whatever goes wrong
    stays inside this episode: an environment crash, a transcript that cannot be written, a
    record that cannot be built are this episode's harness error, never an exception that would
    close the clients of the others."""
    key, condition = episode.key, episode.condition
    decoding = spec.decoding.model_copy(
        update={
            "seed": key.sample_seed if spec.decoding.temperature > 0 else spec.decoding.seed,
            "constrain": key.constrain,
        }
    )
    ctx = EpisodeContext(
        budget=key.budget,
        decoding=decoding,
        tool_mode=spec.tool_mode,
        condition=condition,
    )
    env = None
    try:
        env = await call_env(plan.suite, plan.suite.make, episode.task, plan.options, ctx)
        # a reference agent (harness.agents) is given the episode's env, whose reference() it plays
        result = await run_episode(env, backend.for_episode(env), ctx)
    except Exception as exc:  # an environment crash is the harness's failure, never the agent's
        result = EpisodeResult(harness_error=f"{type(exc).__name__}: {exc}")
    finally:
        if env is not None:
            with contextlib.suppress(Exception):
                await call_env(env, env.close)
    params = condition.record()

    def failed(exc: Exception) -> EpisodeRecord:
        error = EpisodeResult(harness_error=f"recording failed: {type(exc).__name__}: {exc}", calls=result.calls)
        return build_record(
            key, error, run_id=store.run_id, condition_params=params, config=_config(spec), transcript=""
        )

    try:
        # optional per-episode facts an environment reports (fences, invented values, fault outcome)
        extra = env.record_extra() if env is not None else {}
        record = build_record(
            key,
            result,
            run_id=store.run_id,
            condition_params=params,
            config=_config(spec),
            transcript=store.transcript_name(key),
            extra=extra,
        )
    except Exception as exc:
        record = failed(exc)
    saved = store.save(key, {"turns": result.transcript, "harness_error": result.harness_error}, record, failed)
    return saved, (result.harness_error if result.fatal else None)


# episodes played before the run says how long the rest will take
ESTIMATE_AFTER = 3


def _minutes(seconds: float) -> str:
    return (
        f"{seconds:.0f} s"
        if seconds < 90
        else f"{seconds / 60:.0f} min"
        if seconds < 5400
        else f"{seconds / 3600:.1f} h"
    )


def _progress(console: Console) -> Progress:
    """The bar. Its refresh thread redraws only on a terminal (4 times a second): elsewhere (a log,
    CI, a benchmark) the bar is drawn once, at the end, and the thread only took the GIL from the
    event loop (3-6% of the calls per second at C=32, L=50 ms; benchmarks/throughput.py)."""
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("solved {task.fields[solved]}"),
        TextColumn("tokens {task.fields[tokens]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
        auto_refresh=console.is_terminal,
        refresh_per_second=4,
    )
