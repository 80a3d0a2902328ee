"""`fork --check`'s verdict: how many continuations reproduce their source's recorded ones exactly.

A fork under its source's own condition, agent and decoding should play on as the source did:
the same calls (their signatures), the same outcomes, the same end. A reference agent and a model
decoded greedily by a deterministic server reach 100%; a served model's rate is its determinism.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.types import EpisodeKey
from results import run_meta, rundir

# what a continuation must repeat of each recorded call
_CALL = ("kind", "signature", "outcome")


def _calls(calls: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [tuple(c.get(k) for k in _CALL) for c in calls]


def _lines(path: Path) -> list[dict[str, Any]]:
    lines, _ = rundir.read_lines(rundir.records_file(path))
    return [json.loads(line) for _, line in lines]


def differences(out: str | Path) -> tuple[int, list[str]]:
    """The fork records compared (scored ones) and, for each that differs, what differs."""
    meta = run_meta.read_meta(out) or {}
    fork = (meta.get("spec") or {}).get("fork") or {}
    sources: dict[str, dict[str, dict[str, Any]]] = {}
    for path, run in zip(fork.get("sources", []), fork.get("runs", []), strict=False):
        sources[run] = {EpisodeKey.of(r).id(): r for r in _lines(Path(path))}
    compared, differ = 0, []
    for record in _lines(Path(out)):
        origin = record.get("fork_of") or {}
        source = sources.get(str(origin.get("run_id")), {}).get(str(origin.get("episode")))
        if record.get("success") is None or source is None:
            continue
        compared += 1
        recorded = _calls(source["calls"][origin["call"] + 1 :])
        played = _calls(record["calls"])
        ends = (source["end_reason"], source["success"]), (record["end_reason"], record["success"])
        if recorded != played or ends[0] != ends[1]:
            at = next((i for i, (a, b) in enumerate(zip(recorded, played, strict=False)) if a != b), None)
            where = f"call {origin['call'] + 1 + at}" if at is not None else f"the end ({ends[0]} vs {ends[1]})"
            differ.append(f"{record['task_id']} {record['condition']} (fork {record['fork']}): differs at {where}")
    return compared, differ


def reproduced(out: str | Path) -> str | None:
    """One line (and the first differences): the share of continuations that reproduce."""
    if not rundir.is_run_dir(out):
        return None
    compared, differ = differences(out)
    if not compared:
        return "fork --check: no scored continuation to compare"
    same = compared - len(differ)
    share = f"{same / compared:.0%}"
    lines = [f"fork --check: {same} of {compared} continuations reproduce the recorded ones exactly ({share})"]
    lines += [f"  {d}" for d in differ[:10]] + ([f"  ... {len(differ) - 10} more"] if len(differ) > 10 else [])
    return "\n".join(lines)
