"""Counterfactual repair: continue recorded failures under other feedback, from their exact state.

A fork point is a rejected call of a recorded episode, the call within its answer (an answer may
hold several calls, and under BFCL's protocol several may fail): `--at first` each episode's first,
`all` every one, `N` the N-th, counting failed calls. For each fork point, condition, model and
sample seed one episode is played by the one loop (`harness.loop`): the source's calls up to and
including the failed one are replayed on a fresh environment (`harness.replay`: the same actions,
the same conversation, every outcome checked against the record), the failure's feedback is
rendered under the fork's condition, and the agent plays on for its repair budget. Nothing before
the fork point is paid for again, and every condition is compared on the very same failures.

Before anything plays, each fork point's state is rebuilt once with no player behind it: a point
whose environment answers otherwise than recorded (a non-deterministic environment, a suite that
changed, a plugin whose source differs) is refused, named and counted, never played.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.contract import EpisodeContext, Task
from envs.errors import UserError
from harness.answers import NOT_EXECUTED
from harness.fork_imports import imported_said, release_of
from harness.loop import call_env, run_episode
from harness.plugins import Plugin
from harness.recording import repairs
from harness.replay import PrefixEnd, Replay, Replaying
from harness.run_spec import RunSpec
from harness.spec import Resolved, check_grid_size, resolved
from harness.types import SCHEMA_VERSION, EpisodeKey, ModelTurn
from results import run_meta, rundir
from results.divergence import shown_until

# call outcomes that are not a rejection (CallLog.outcome); any other is a violation's code
NOT_REJECTED = frozenset({"accepted", "won", "lost", "done", "review", "harness_error", NOT_EXECUTED})
# the spec fields every source of one fork shares: they decide the environment and the conversation
SHARED = ("suite", "env_options", "tool_mode", "text_calls", "feedback_cut")


class ForkError(UserError):
    """A fork that cannot start: the message names the source and what is wrong; nothing is written."""


class NothingToFork(ForkError):
    """Sources with no fork point to play (no failure, or every point refused): of a folder of
    several suites, that suite is named and skipped while another has points."""


@dataclass(frozen=True)
class Source:
    """A recorded run: its directory, its run.json and the spec it was played under."""

    path: Path
    meta: dict[str, Any]

    @property
    def run_id(self) -> str:
        return str(self.meta["run_id"])

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self.meta["spec"])


@dataclass(frozen=True)
class Point:
    """One rejected call of one recorded episode: the fork starts from it."""

    source: Source
    record: dict[str, Any]
    call: int  # the index of the failed answer in the record's calls (and the transcript's turns)
    turns: list[dict[str, Any]]  # the source transcript's turns up to and including the failed call
    # the failed call within its answer (None: an answer with no call read, or a record older than
    # its call log's `call_outcomes`, whose failed call is not known)
    within: int | None = None

    def id(self) -> str:
        at = f"{self.call}" if not self.within else f"{self.call}.{self.within}"
        return f"{self.source.run_id}:{EpisodeKey.of(self.record).slug()}:{at}"

    def tool(self) -> str | None:
        """The failed call's tool (None where the failed action is no call, or not known)."""
        tools = (self.record["calls"][self.call] or {}).get("tools") or []
        if self.within is None:
            return tools[0] if len(tools) == 1 else None
        return tools[self.within] if self.within < len(tools) else None

    def replay(self, before: Any) -> Replay:
        return Replay(
            turns=[ModelTurn(**t["answer"]) for t in self.turns],
            outcomes=[t.get("outcome") for t in self.turns],
            before=before,
            budget=int(self.record["budget"]),
            at=self.within,
        )

    def origin(self) -> dict[str, Any]:
        """What a fork's record keeps of its source (`fork_of`): the player it forks, its condition."""
        r = self.record
        return {
            "run_id": self.source.run_id,
            "episode": EpisodeKey.of(r).id(),
            "call": self.call,
            "within": self.within,
            "tool": self.tool(),
            "signature": self._signature(),
            "model": r["model"],
            "model_id": r.get("model_id"),
            "condition": r["condition"],
            "budget": r["budget"],
            "sample_seed": r["sample_seed"],
            "success": r["success"],
            # what the source's own player did next, under its own feedback (the report's row beside
            # the forks): its next answer repaired the failed call; each part's solved, by part
            "next_repaired": self._next_repaired(),
            "segments_solved": (r.get("extra") or {}).get("segments_solved"),
            # an import's: its entry replayed as the file logged (None: no log to compare with)
            **({"faithful": replay.get("faithful")} if (replay := (r.get("extra") or {}).get("replay")) else {}),
        }

    def _signature(self) -> str | None:
        """The failed call's own signature (None where the record does not say which call failed)."""
        signatures = (self.record["calls"][self.call] or {}).get("call_signatures") or []
        return signatures[self.within] if self.within is not None and self.within < len(signatures) else None

    def _next_repaired(self) -> bool | None:
        """Whether the source's next answer held an accepted call of the failed call's tool (None:
        the source had no next answer)."""
        later = [c for c in self.record["calls"][self.call + 1 :] if c.get("outcome") != "review"]
        if not later:
            return None
        return repairs(later[0], self.tool(), self._signature())


@dataclass(frozen=True)
class Rebuilt:
    """A fork point whose state was rebuilt: the budget it had left (in the budget's unit)."""

    point: Point
    left: int


def load_sources(paths: list[str]) -> list[Source]:
    """The run directories the paths name (a folder of runs stands for them), each checked."""
    sources = []
    for path in rundir.run_dirs(paths):
        meta = run_meta.read_meta(path)
        if not rundir.is_run_dir(path) or meta is None:
            raise ForkError(f"{path}: not a run directory (no {rundir.RECORDS} with its {rundir.META})")
        missing = [f for f in ("spec", "run_id") if meta.get(f) is None]  # read_meta checks types, not presence
        if missing:
            raise ForkError(f"{rundir.meta_file(path)} has no {' or '.join(missing)}: damaged; nothing forks from it")
        # the grid a fork takes from its source: a hand-made run.json without it was told as the
        # flags' fault ("flags: sample_seeds is empty")
        spec = meta["spec"] if isinstance(meta["spec"], dict) else {}
        if gone := [f"spec.{f}" for f in ("suite", "models", "conditions", "sample_seeds") if not spec.get(f)]:
            raise ForkError(f"{rundir.meta_file(path)} has no {', '.join(gone)}: damaged; nothing forks from it")
        if isinstance(meta.get("spec"), dict) and meta["spec"].get("fork"):
            raise ForkError(f"{path}: a fork's records cannot be forked again; fork its source instead")
        sources.append(Source(path, meta))
    return sources


def groups(sources: list[Source]) -> list[list[Source]]:
    """The sources by what decides their environment and conversation (`SHARED`, and the bfcl-eval
    release an import was replayed on and its runner's handler): one fork run per group (a folder
    of imports holds several suites, and `--bfcl-version auto` may have replayed its files on
    several releases)."""
    out: dict[str, list[Source]] = {}
    for s in sources:
        key = [*(s.spec.get(f) for f in SHARED), release_of(s), imported_said(s, "bfcl_runner")]
        out.setdefault(json.dumps(key, sort_keys=True, default=str), []).append(s)
    return list(out.values())


def _records(source: Source) -> list[dict[str, Any]]:
    lines, _ = rundir.read_lines(rundir.records_file(source.path))
    out = []
    for no, line in lines:
        record = json.loads(line)
        version = record.get("schema_version")
        if version != SCHEMA_VERSION:
            raise ForkError(
                f"{source.path}:{no}: recorded by schema {version}, this harness reads {SCHEMA_VERSION}; "
                "play the source again with this version"
            )
        # the one check of `report` and `run` too: a budget edited to "4" is named, never played
        rundir.check_record(record, f"{rundir.records_file(source.path)}:{no}")
        out.append(record)
    return out


def _rejected(record: dict[str, Any], at: str) -> list[tuple[int, int | None]]:
    """The failed calls `--at` picks: (the answer's index, the call's within it), counting calls."""
    calls: list[tuple[int, int | None]] = []
    for j, c in enumerate(record.get("calls") or []):
        if c.get("outcome") in NOT_REJECTED:
            continue
        failed = [k for k, label in enumerate(c.get("call_outcomes") or []) if label not in NOT_REJECTED]
        calls.extend([(j, k) for k in failed] or [(j, None)])
    if at == "first":
        return calls[:1]
    if at == "all":
        return calls
    n = int(at)
    return calls[n - 1 : n]


def points(sources: list[Source], at: str) -> tuple[list[Point], Counter[str]]:
    """Every fork point of the sources' scored episodes, and the points refused before any
    replay (a transcript that does not match its record), counted by reason."""
    found: list[Point] = []
    refused: Counter[str] = Counter()
    for source in sources:
        for record in _records(source):
            if record.get("success") is None:
                continue  # a harness error says nothing about the agent: nothing to fork
            calls = _rejected(record, at)
            if not calls:
                continue
            turns = _turns(source, record)
            if turns is None or len(turns) != len(record["calls"]):
                refused["the transcript is missing or does not match its record"] += len(calls)
                continue
            shown = shown_until(record)
            late = [(j, k) for j, k in calls if shown is not None and j >= shown]
            if late:  # the replay no longer answered as the model was shown: not the state it acted in
                refused["at or after the import's first divergence from what the model was shown"] += len(late)
            found.extend(Point(source, record, j, turns[: j + 1], k) for j, k in calls if (j, k) not in late)
    return found, refused


def _turns(source: Source, record: dict[str, Any]) -> list[dict[str, Any]] | None:
    name = record.get("transcript")
    path = (source.path / str(name)).resolve() if name else None
    if path is None or source.path.resolve() not in path.parents or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        turns = data.get("turns")
        # its own key (a record whose task id was edited would replay the conversation on another
        # task), and each turn's answer as the replay reads it (Point.replay)
        if data.get("key") != EpisodeKey.of(record).model_dump() or not isinstance(turns, list):
            return None
        for turn in turns:
            ModelTurn(**turn["answer"])
    except (ValueError, OSError, AttributeError, KeyError, TypeError, RecursionError):
        return None
    return turns


def source_spec(source: Source, fork: RunSpec) -> RunSpec:
    """The spec the source was played under, with the fork's plugins (its conditions' names are
    looked up as the source's were)."""
    return RunSpec(**{k: v for k, v in source.spec.items() if k in RunSpec.model_fields}, plugins=fork.plugins)


async def rebuild(plan: Resolved, point: Point, task: Task, before: Any) -> Rebuilt | str:
    """Replay a fork point's prefix with no player: the budget it had left, or why its state
    cannot be rebuilt."""
    spec = plan.spec
    ctx = EpisodeContext(budget=1, decoding=spec.decoding, tool_mode=spec.tool_mode, condition=before)
    replay = point.replay(before)
    env = await call_env(plan.suite, plan.suite.make, task, plan.options, ctx)
    try:
        result = await run_episode(env, Replaying(replay, None), ctx, replay)
    finally:
        await call_env(env, env.close)
    if result.prefix is None:
        return result.harness_error or "state not rebuilt: the episode ended before its fork point"
    if result.harness_error != str(PrefixEnd("the replay ended at its fork point")):
        return f"state not rebuilt: {result.harness_error}"
    left = int(point.record["budget"]) - result.prefix.spent
    return Rebuilt(point, left) if left > 0 else "no budget left at the failure (give --budget)"


@dataclass(frozen=True)
class Planned:
    """One fork episode: its key (the fork point in it), task, condition and the source to replay."""

    key: EpisodeKey
    task: Task
    condition: Any  # envs.contract.Condition
    replay: Replay
    origin: dict[str, Any]
    repair_budget: int


async def plan(run: Resolved, tasks: list[Task]) -> tuple[list[Planned], Counter[str]]:
    """Every fork point's episodes, and the points refused (by reason). Each point's state is
    rebuilt once here, with no player, before any episode plays."""
    spec = run.spec
    assert spec.fork is not None
    fork = spec.fork
    sources = load_sources(fork.sources)
    found, refused = points(sources, fork.at)
    if not found and not refused:
        where = ", ".join(fork.sources)
        raise NothingToFork(f"{where}: no scored episode has a rejected call (--at {fork.at}): no fork point")
    # counted before a point is rebuilt or an episode made (`--seeds 0..2000000` ran out of memory)
    check_grid_size(len(found) * len(fork.models or [1]) * len(fork.seeds or [1]) * len(spec.conditions))
    by_id = {t.task_id: t for t in tasks}
    conditions = run.conditions
    changed = _changed_plugins(sources, run.plugins)
    befores: dict[str, dict[str, Any]] = {}
    out: list[Planned] = []
    for point in found:
        r = point.record
        if point.source.run_id in changed:
            refused[changed[point.source.run_id]] += 1
            continue
        task = by_id.get(r["task_id"])
        if task is None:
            refused[f"task {r['task_id']} is not in suite {spec.suite} as installed"] += 1
            continue
        if point.source.run_id not in befores:
            befores[point.source.run_id] = resolved(source_spec(point.source, spec)).conditions
        before = befores[point.source.run_id].get(r["condition"])
        if before is None:  # a record naming a condition its run did not plan: edited, or damaged
            refused[f"condition {r['condition']} is not among its run's conditions"] += 1
            continue
        names = [r["condition"]] if fork.check else list(spec.conditions)
        unlike = [n for n in names if _settings(conditions.get(n) or before) != _settings(before)]
        if unlike:
            refused[f"condition {unlike[0]} sets the environment otherwise than {r['condition']}"] += 1
            continue
        rebuilt = await rebuild(run, point, task, before)
        if isinstance(rebuilt, str):
            refused[rebuilt] += 1
            continue
        # the key holds the grid's budget, so that report rows never split by what each source had
        # left; the episode plays what it was given (--budget) or what its source had left
        budget = fork.budget or int(r["budget"])
        replay = point.replay(before)
        for model in fork.models or [r["model"]]:
            for seed in fork.seeds or [r["sample_seed"]]:
                for name in names:
                    key = EpisodeKey(
                        suite=spec.suite,
                        task_id=r["task_id"],
                        model=model,
                        condition=name,
                        budget=budget,
                        sample_seed=seed,
                        constrain=r.get("constrain", "none"),
                        fork=point.id(),
                    )
                    condition = before if fork.check else conditions[name]
                    out.append(Planned(key, task, condition, replay, point.origin(), fork.budget or rebuilt.left))
    if not out:
        reasons = "; ".join(f"{n} {reason}" for reason, n in refused.most_common())
        raise NothingToFork(f"every fork point was refused, nothing to play: {reasons}")
    return out, refused


def _changed_plugins(sources: list[Source], loaded: list[Plugin]) -> dict[str, str]:
    """The sources played with a plugin whose code is not the one loaded now (run id -> why):
    their environments may answer otherwise, so none of their points can be rebuilt."""
    now = {p.path: p.sha256 for p in loaded}
    out = {}
    for source in sources:
        for old in source.meta.get("plugins") or []:
            sha = now.get(str(old.get("path")))
            if sha != old.get("sha256"):
                then = str(old.get("sha256"))[:12]
                out[source.run_id] = (
                    f"plugin {old.get('name')} is not the one the source ran (sha256 {then} then, "
                    f"{'not loaded' if sha is None else sha[:12]} now)"
                )
    return out


def _settings(condition: Any) -> Any:
    """What a condition sets in the environment (the env is rebuilt under the source's)."""
    return condition.sets("fault_shape")
