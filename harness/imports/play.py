"""Recorded episodes of another harness, played again through the one loop into a run directory.

An importer (harness.imports) turns a file into `Recorded` episodes: the task, the model's answers
in order, and what the other harness told the model about each call. Each is played by
`harness.loop.run_episode` with a backend that answers with those turns (`harness.replay.Replaying`
with no player behind it), on the suite's own environment, under the condition that renders the
other harness's own feedback: the environment judges every call as our contract does, the record
is the project's record, and the transcript is one a fork can replay. Nothing else plays: a
recorded answer is never sent anywhere.

What the environment answered is compared with what the other harness said, call by call
(`Watched`): an episode is faithful when every replayed call got the logged text, diverged from
its first call that did not (recorded with both texts and a cause: nothing after it is what the
model saw, and `fork` refuses points there), and unverified when the file logged nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console

from envs.contract import (
    Accepted,
    Action,
    Env,
    EpisodeContext,
    Opening,
    Outcome,
    Segmented,
    Task,
    ToolCall,
    Violation,
)
from harness.episodes import expand
from harness.loop import EpisodeResult, call_env, run_episode
from harness.provenance import git_commit, versions
from harness.recording import build_record, unsaved_record
from harness.redact import Redactor
from harness.replay import Replay, Replaying
from harness.run_spec import RunSpec
from harness.rundir.store import RunDir
from harness.spec import Resolved, resolved
from harness.types import ModelTurn

# a record's `config` holds the run's decoding and tool mode; an import knows not the model's
# decoding (the other harness chose it), and says so; its calls are replayed as native tool calls
CONFIG = {"imported": True, "tool_mode": "native"}
TWICE = "an entry id given again (the first stands)"


@dataclass(frozen=True)
class Recorded:
    """One recorded episode. `said`: per call submitted, in order, the other harness's text for
    it (None: it logged none, and the replay is unverified). `answer_of`: per call, the index of
    the answer (model turn) it belongs to. `error`: why it cannot be played (recorded as a harness
    error, never scored). A recording that stops before the episode's end is an error, unless the
    protocol's own rule ended it there (BFCL's force-quit, which the loop plays)."""

    task: Task
    turns: list[ModelTurn]
    said: list[str] | None
    extra: dict[str, Any]
    error: str | None = None
    answer_of: list[int] = field(default_factory=list)


@dataclass
class Batch:
    """One run directory's worth: a spec (one suite, one model) and its recorded episodes."""

    spec: RunSpec
    episodes: list[Recorded]
    provenance: dict[str, Any]


@dataclass
class Written:
    """What a batch wrote: records (by end), harness errors, the ones already there, fidelity."""

    out: str
    records: int = 0
    already: int = 0
    # entries whose id came again in the batch (a file or an id given twice): the later, skipped
    twice: list[str] = field(default_factory=list)
    ends: Counter[str] = field(default_factory=Counter)
    fidelity: Counter[str] = field(default_factory=Counter)


def _failure(text: str) -> bool:
    """Whether a tool's text is a failure as BFCL writes one (its `Error during execution: ...`,
    or a JSON object with an `error`)."""
    if text.startswith("Error during execution"):
        return True
    try:
        value = json.loads(text)
    except ValueError:
        return False
    return isinstance(value, dict) and "error" in value


def _numbers(text: str) -> list[float] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    values = list(value.values()) if isinstance(value, dict) else [value]
    return [float(v) for v in values] if all(isinstance(v, (int, float)) for v in values) else None


def _cause(here: str, there: str) -> str:
    ours, theirs = _numbers(here), _numbers(there)
    if (
        ours
        and theirs
        and len(ours) == len(theirs)
        and all(abs(a - b) <= 1e-12 * max(abs(a), abs(b), 1) for a, b in zip(ours, theirs, strict=True))
    ):
        # Python 3.12's sum() of floats is compensated (gh-100425): another interpreter, other digits
        return "the same number but for its last digits (another Python's float arithmetic)"
    if _failure(here) and not _failure(there):
        return "failed here, not when the model played"
    if _failure(there) and not _failure(here):
        return "failed when the model played, not here"
    return "answered with another text"


class Watched:
    """The environment, with each submitted action's outcome compared to what the other harness
    said about the same call (the loop sees the environment unchanged)."""

    def __init__(self, env: Env, said: list[str] | None, answer_of: list[int]):
        self._env, self._said, self._answer_of, self.seen = env, said or [], answer_of, Counter[str]()
        self.logged = said is not None
        # the first call answered otherwise than the model was told: nothing after it is what it saw
        self.divergence: dict[str, Any] | None = None
        self.blocking = getattr(env, "blocking", True)
        self._segmented = env if isinstance(env, Segmented) else None  # once: a protocol's isinstance is 20 us

    def reset(self) -> Opening:
        return self._env.reset()

    def record_extra(self) -> dict[str, Any]:
        return self._env.record_extra()

    def reference(self) -> list[Action]:
        return self._env.reference()

    def segment(self) -> int | None:
        """The wrapped environment's part of the task (the loop counts a protocol's steps by it)."""
        return self._segmented.segment() if self._segmented is not None else None

    def close(self) -> None:
        self._env.close()

    def submit(self, action: Action) -> Outcome:
        outcome = self._env.submit(action)
        if isinstance(action, ToolCall):
            i = self.seen["calls"]
            self.seen["calls"] += 1
            theirs = self._said[i] if i < len(self._said) else None
            ours = outcome.observation if isinstance(outcome, Accepted) else outcome.raw
            if isinstance(outcome, Violation) and not outcome.raw:
                self.seen["rejected_here_not_there"] += 1  # our contract refused what their harness ran
                self._diverge(i, ours or outcome.message, theirs, "refused here, run when the model played")
            elif theirs is not None:
                self.seen["same_text" if ours == theirs else "other_text"] += 1
                if ours != theirs:
                    self._diverge(i, ours, theirs, _cause(ours, theirs))
            elif self.logged:
                self._diverge(i, ours, None, "run here, not logged when the model played")
        return outcome

    def _diverge(self, call: int, here: str, there: str | None, cause: str) -> None:
        if self.divergence is None:
            answer = self._answer_of[call] if call < len(self._answer_of) else None
            # both texts from a little before their first difference (`at`: its offset)
            at = next((i for i, (a, b) in enumerate(zip(here, there or "", strict=False)) if a != b), None)
            at = min(len(here), len(there or "")) if at is None else at
            start = max(0, at - 60)
            self.divergence = {
                "call": call,
                "answer": answer,
                "at": at,
                "here": here[start : start + 300],
                "there": None if there is None else there[start : start + 300],
                "cause": cause,
            }

    def fidelity(self) -> dict[str, Any]:
        """The replay's counts, and whether it is faithful (None: nothing logged to compare)."""
        calls = self.seen["calls"]
        if self.logged and self.divergence is None and calls < len(self._said):
            self._diverge(calls, "", self._said[calls], "logged when the model played, not run here")
        faithful = None if not self.logged else self.divergence is None
        return {**self.seen, "logged": self.logged, "faithful": faithful, "divergence": self.divergence}


async def _play(plan: Resolved, ep: Recorded, ctx: EpisodeContext) -> tuple[EpisodeResult, dict[str, Any]]:
    if ep.error is not None:
        return EpisodeResult(harness_error=ep.error), {}
    replay = Replay(turns=ep.turns, outcomes=[None] * len(ep.turns), before=ctx.condition, budget=len(ep.turns))
    env = await call_env(plan.suite, plan.suite.make, ep.task, plan.options, ctx)
    watched = Watched(env, ep.said, ep.answer_of)
    try:
        result = await run_episode(watched, Replaying(replay, None), ctx)
        extra = env.record_extra()
    finally:
        with contextlib.suppress(Exception):
            await call_env(env, env.close)
    unplayed = len(ep.turns) - len(result.calls)
    if result.harness_error is None and unplayed:
        result.harness_error = f"the environment ended the episode {unplayed} recorded calls before the recording did"
    elif result.harness_error is None and not result.done:
        result.harness_error = "the recording stops before the episode's end (and not by its harness's own limit)"
    extra["replay"] = watched.fidelity()
    return result, extra


async def _write(batch: Batch, console: Console) -> Written:
    spec = batch.spec
    written = Written(out=spec.out)
    store = RunDir(spec.out, Redactor.from_env(spec.api_key_env, public=(spec.suite, *spec.models, *spec.conditions)))
    done = store.open(spec)
    try:
        # the spec names one model, condition, budget and seed: one episode (key, condition) a task
        plan = resolved(spec)  # the batch's one resolution
        grid = expand(plan, [ep.task for ep in batch.episodes])
        todo, seen = [], set()
        for planned, ep in zip(grid, batch.episodes, strict=True):
            if planned.key.id() in seen:  # recorded once: the first stands, the later is named
                written.twice.append(ep.task.task_id)
                continue
            seen.add(planned.key.id())
            if planned.key.id() in done:
                written.already += 1
            else:
                todo.append((planned, ep))
        if written.twice:
            batch.provenance.setdefault("skipped", {})[TWICE] = len(written.twice)
            batch.provenance.setdefault("skipped_ids", {})[TWICE] = written.twice
        store.start_session({"versions": versions(), "git": git_commit(), "imported": batch.provenance})
        saved = []
        for planned, ep in todo:
            key, condition = planned.key, planned.condition
            ctx = EpisodeContext(
                budget=max(1, len(ep.turns)), decoding=spec.decoding, tool_mode=spec.tool_mode, condition=condition
            )
            result, extra = await _play(plan, ep, ctx)
            fidelity = extra.get("replay")
            if fidelity:  # an entry that could not be played has none
                faithful = fidelity.get("faithful")
                for count in ("calls", "same_text", "other_text", "rejected_here_not_there"):
                    written.fidelity[count] += fidelity.get(count, 0)
                written.fidelity["faithful" if faithful else "unverified" if faithful is None else "diverged"] += 1
            record = build_record(
                key,
                result,
                run_id=store.run_id,
                condition_params=condition.record(),
                config=CONFIG,
                transcript=store.transcript_name(key),
                extra={**extra, **ep.extra},
            )
            failed = functools.partial(
                unsaved_record, key, result, run_id=store.run_id, condition_params=condition.record(), config=CONFIG
            )
            transcript = {"turns": result.transcript, "harness_error": result.harness_error}
            saved.append(store.save(key, transcript, record, failed))
            written.ends[record.end_reason] += 1
            written.records += 1
        await asyncio.gather(*saved)
    finally:
        store.close()
    return written


def write(batch: Batch, console: Console) -> Written:
    """Play a batch's recorded episodes not yet in its run directory and append their records."""
    return asyncio.run(_write(batch, console))
