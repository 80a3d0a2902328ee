"""One run's play of its pending episodes: the phases of model servers (plan them, open and check
a phase's models, start or update the run.json session, play, stop each model's server when its
episodes are done), each model's lanes of workers, and one episode from its environment to its record.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.markup import escape

from envs.contract import EpisodeContext
from harness.agents.base import PREFIX as AGENT_PREFIX
from harness.answers import signature
from harness.episodes import Episode
from harness.errors import HarnessError, StartFailed
from harness.loop import EpisodeResult, call_env, run_episode
from harness.progress import ESTIMATE_AFTER, Counter, _progress
from harness.provenance import git_commit, versions
from harness.recording import build_record, unsaved_record
from harness.replay import Replaying
from harness.run_spec import RunSpec
from harness.rundir.store import RunDir
from harness.serving import Backend, Lane, ModelPool, Plan, check_models, describe_phase, plan_servers
from harness.spec import Resolved
from harness.types import EpisodeRecord, ModelTurn


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
    # a fork's points whose state could not be rebuilt, by reason (harness.fork): never played
    refused: dict[str, int] = field(default_factory=dict)
    # a fork's planned grid: [model, suite, condition, budget, sample seed, constrain, episodes]
    # per cell, so that the report of an interrupted fork names its missing cells (results.grid)
    fork_cells: list[list[Any]] | None = None

    def line(self) -> str:
        """The run's last line: what it played and found."""
        kept = self.errors_on_record
        return (
            f"{self.done} episodes played, {self.skipped} already recorded, {self.solved} solved, "
            f"{self.harness_errors} harness errors, {self.tokens:,} tokens"
            + (f"; {kept} earlier harness-error records kept (not replayed)" if kept else "")
        )


def _config(spec: RunSpec) -> dict[str, Any]:
    return spec.model_dump(include={"decoding", "tool_mode", "text_calls", "feedback_cut", "env_options"})


async def play_pending(
    plan: Resolved,
    pending: list[Episode],
    store: RunDir,
    summary: RunSummary,
    console: Console,
    retry_errors: bool,
    preflight: bool,
    after_start: Callable[[], None] | None,
) -> None:
    """Play the pending episodes phase by phase (harness.serving.placement): open a phase's
    models and check them, play their episodes, stop each model's server once they are done."""
    spec = plan.spec
    placed = _plan_phases(spec, pending, console)
    async with contextlib.AsyncExitStack() as stack:
        pool = ModelPool(spec, stack, warn=functools.partial(_warn, console))
        session = _Session(plan, store, summary, console, pool, pending)
        with contextlib.ExitStack() as shown:
            for number, phase in enumerate(placed.phases, start=1):
                if len(placed.phases) > 1 or placed.inventory.gpus:
                    console.print(describe_phase(phase, number, len(placed.phases)), highlight=False)
                backends = await session.open(phase.models, placed, preflight)
                lanes = {m: [pool.lane(b) for b in backends[m]] for m in phase.models}
                if number == 1:  # only now does the run start: a failed start leaves no run.json behind
                    session.start(retry_errors, after_start)
                    _say_start(console, pending, summary, lanes, len(placed.phases))
                    session.counter.attach(shown.enter_context(_progress(console)), len(pending))
                else:
                    session.update()
                await session.play(lanes, backends)
                if summary.stopped is not None:
                    return


def _plan_phases(spec: RunSpec, pending: list[Episode], console: Console) -> Plan:
    """The servers' phases for the models with episodes pending; the plan's notes said."""
    placed = plan_servers(spec, [m for m in spec.models if any(e.key.model == m for e in pending)])
    for note in placed.notes:
        console.print(note, highlight=False)
    return placed


def _warn(console: Console, text: str) -> None:
    """What a server sent that the harness did not believe; escaped: a server's words are no markup."""
    console.print(f"[yellow]warning:[/yellow] {escape(text)}", highlight=False, soft_wrap=True)


def _say_start(
    console: Console, pending: list[Episode], summary: RunSummary, lanes: dict[str, list[Lane]], phases: int
) -> None:
    """The run's first count: the episodes to play (the reference agents' apart: they take no time)
    and how many play at once, per model where several play (a server that answers one request
    at a time plays one, beside agents that play several)."""
    per_model = {m: sum(lane.target for lane in ls) for m, ls in lanes.items()}
    adaptive = any(lane.metrics_url for ls in lanes.values() for lane in ls)
    agents = sum(e.key.model.startswith(AGENT_PREFIX) for e in pending)
    at_once = ", ".join(f"{m} {n}" for m, n in per_model.items())
    console.print(
        f"{len(pending)} episodes to play"
        + (f" ({summary.skipped} already recorded)" if summary.skipped else "")
        + (f" ({agents} of them reference agents', which take no time)" if agents and agents < len(pending) else "")
        + (f", at a time: {at_once}" if len(per_model) > 1 else f", {sum(per_model.values())} at a time")
        + (" to start with (more while the servers' batches have room)" if adaptive else "")
        + (f", in {phases} phases of servers" if phases > 1 else "")
        + (f" (the models' time left is estimated after {ESTIMATE_AFTER})" if agents < len(pending) else ""),
        highlight=False,
    )


@dataclass
class _Session:
    """One `run`'s play: the models' queues of episodes, the run.json session it keeps up to
    date, and what the phases learnt (each model's concurrency, the constraints not enforced)."""

    plan: Resolved
    store: RunDir
    summary: RunSummary
    console: Console
    pool: ModelPool
    pending: list[Episode]
    queues: dict[str, asyncio.Queue[Episode]] = field(init=False)
    counter: Counter = field(init=False)
    concurrency: dict[str, Any] = field(default_factory=dict)
    unenforced: dict[str, list[str]] = field(default_factory=dict)
    found: dict[str, list[str]] = field(default_factory=dict)  # the phase's own

    def __post_init__(self) -> None:
        self.queues = {m: asyncio.Queue() for m in dict.fromkeys(e.key.model for e in self.pending)}
        for e in self.pending:
            self.queues[e.key.model].put_nowait(e)
        self.counter = Counter(self.summary, [e for e in self.pending if not e.key.model.startswith(AGENT_PREFIX)])

    async def open(self, models: list[str], placed: Plan, preflight: bool) -> dict[str, list[Backend]]:
        """Open a phase's models (their servers start) and check them."""
        backends = {}
        for m in models:
            try:
                backends[m] = await self.pool.open(m, placed.server(m))
            except HarnessError as exc:
                raise StartFailed(str(exc)) from None
        if preflight:
            await check_models(backends, self.pool, self.plan.spec, self.console)
        # a style said in an earlier phase is not said again
        self.found = await _unenforced(self.plan, self.pending[0], backends, self.console, frozenset(self.unenforced))
        self.unenforced |= self.found
        self.summary.served = self.pool.served
        return backends

    def start(self, retry_errors: bool, after_start: Callable[[], None] | None) -> None:
        self.store.start_session(
            {
                "versions": versions(),
                "git": git_commit(),
                "served": self.pool.served,
                **({"fork_refused": self.summary.refused} if self.summary.refused else {}),
                **({"fork_cells": self.summary.fork_cells} if self.summary.fork_cells is not None else {}),
                **({"constrain_unenforced": self.unenforced} if self.unenforced else {}),
            },
            retry_errors,
        )
        if after_start is not None:
            after_start()

    def update(self) -> None:
        self.store.update_session(
            served=self.pool.served, **({"constrain_unenforced": self.unenforced} if self.found else {})
        )

    async def play(self, lanes: dict[str, list[Lane]], backends: dict[str, list[Backend]]) -> None:
        """Play the phase's models at once; each model's server stops when its episodes are done."""
        await _all(self._model(m, lanes[m], backends[m]) for m in lanes)
        self.store.update_session(concurrency=self.concurrency)

    async def _model(self, model: str, lanes: list[Lane], backends: list[Backend]) -> None:
        await asyncio.gather(
            *(
                lane.run(self.queues[model], functools.partial(self._one, backend=b), self._stopped)
                for lane, b in zip(lanes, backends, strict=True)
            )
        )
        self.concurrency[model] = _lanes_record(lanes)
        await self.pool.close(model)

    def _stopped(self) -> bool:
        return self.summary.stopped is not None

    async def _one(self, e: Episode, backend: Backend) -> asyncio.Future[EpisodeRecord]:
        saved, fatal = await _one(self.plan, e, backend, self.store)
        if fatal is not None and self.summary.stopped is None:
            self.summary.stopped = f"the model server failed: {fatal}"
        saved.add_done_callback(self.counter.count)
        return saved


async def _unenforced(
    plan: Resolved,
    first: Episode,
    backends: dict[str, list[Backend]],
    console: Console,
    said: frozenset[str] = frozenset(),
) -> dict[str, list[str]]:
    """Under `--constrain schema`, the keywords of the tools' schemas that a server cannot
    constrain (harness.serving.backends.constrain.unenforced), said once per run: those values are
    checked by the tools only. The tools are those of the first task's opening."""
    spec = plan.spec
    styles = {s for bs in backends.values() for b in bs if (s := getattr(b, "constrain_style", None))} - said
    if "schema" not in spec.constrain or not styles:
        return {}
    from harness.serving import unenforced  # the constraint styles: only under --constrain schema

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


def _lanes_record(lanes: list[Lane]) -> dict[str, Any]:
    """What run.json keeps of a model's concurrency: its lane's, or per endpoint."""
    records = [lane.record() for lane in lanes]
    return records[0] if len(records) == 1 else {"mode": "per endpoint", "endpoints": records}


async def _all(coroutines: Any) -> None:
    """Run the coroutines at once; the first failure cancels the others and is raised."""
    tasks = [asyncio.ensure_future(c) for c in coroutines]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def _one(
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
    spec = plan.spec
    key, condition = episode.key, episode.condition
    decoding = spec.decoding.model_copy(
        update={
            "seed": key.sample_seed if spec.decoding.temperature > 0 else spec.decoding.seed,
            "constrain": key.constrain,
        }
    )
    ctx = EpisodeContext(
        budget=episode.repair_budget or key.budget,
        decoding=decoding,
        tool_mode=spec.tool_mode,
        condition=condition,
    )
    env = None
    try:
        env = await call_env(plan.suite, plan.suite.make, episode.task, plan.options, ctx)
        # a reference agent (harness.agents) is given the episode's env, whose reference() it plays
        player = backend.for_episode(env)
        replay = episode.replay
        result = await run_episode(env, Replaying(replay, player) if replay else player, ctx, replay)
    except Exception as exc:  # an environment crash is the harness's failure, never the agent's
        result = EpisodeResult(harness_error=f"{type(exc).__name__}: {exc}")
    finally:
        if env is not None:
            with contextlib.suppress(Exception):
                await call_env(env, env.close)
    params = condition.record()
    failed = functools.partial(
        unsaved_record, key, result, run_id=store.run_id, condition_params=params, config=_config(spec)
    )

    try:
        # optional per-episode facts an environment reports (fences, invented values, fault outcome)
        extra = env.record_extra() if env is not None else {}
        reference = _reference(env) if episode.origin is not None and env is not None else None
        record = build_record(
            key,
            result,
            run_id=store.run_id,
            condition_params=params,
            config=_config(spec),
            transcript=store.transcript_name(key),
            extra=extra,
            fork_of=episode.origin,
            reference=reference,
        )
    except Exception as exc:
        record = failed(exc)
    saved = store.save(key, {"turns": result.transcript, "harness_error": result.harness_error}, record, failed)
    return saved, (result.harness_error if result.fatal else None)


def _reference(env: Any) -> set[str] | None:
    """The signatures of the task's reference actions (what a fork's repairing call is checked
    against); None where the environment gives none."""
    try:
        actions = env.reference()
    except Exception:  # an environment without a known solution: progress is not told
        return None
    return {signature([a], ModelTurn()) for a in actions} or None
