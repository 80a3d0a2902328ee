"""The grid a run set out to play, beside what its records hold: which cells have no results, and why.

A run directory's run.json keeps the spec that decides its grid (suite x models x conditions x
budgets x sample seeds, over its tasks). A command that plays several runs (demo) writes
`plan.json` in their folder before the first one starts, so a folder whose second run never
started still names it. A cell (model, suite, condition, budget, sample seed) is a gap when it
has no episode ("not run"), only harness errors ("harness errors only"), or fewer episodes than
its tasks ("partial"). Read from files beside the records only; nothing here imports the harness.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from envs import SUITES
from results import rundir
from results.columns import C

CELL = (C.model, C.suite, C.condition, C.budget, C.sample_seed, C.constrain)
NOT_RUN, ERRORS_ONLY, PARTIAL = "not run", "harness errors only", "partial"


@dataclass(frozen=True)
class PlannedRun:
    run_dir: str
    spec: dict[str, Any]  # the spec's identity, as run.json and plan.json keep it
    started: bool  # the run directory holds records


def write_plan(folder: Path, runs: Sequence[tuple[str, dict[str, Any]]]) -> Path:
    """`runs`: (run directory name inside `folder`, spec identity) in the order they will play."""
    folder.mkdir(parents=True, exist_ok=True)
    path = rundir.plan_file(folder)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(
        json.dumps({"runs": [{"dir": d, "spec": s} for d, s in runs]}, indent=2, default=str), encoding="utf-8"
    )
    tmp.replace(path)
    return path


def _json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # an unreadable plan only loses the gaps section, never the report
    return data if isinstance(data, dict) else None


def plans(dirs: Iterable[Path]) -> list[PlannedRun]:
    """The planned runs of the paths the user named: each run directory's spec, and for a folder
    of runs with a plan.json, every run it planned (those never started included)."""
    out: dict[str, PlannedRun] = {}
    for d in map(Path, dirs):
        plan = _json(rundir.plan_file(d)) if rundir.is_folder_of_runs(d) else None
        for entry in (plan or {}).get("runs", []):
            run_dir = d / str(entry.get("dir"))
            spec = (_json(rundir.meta_file(run_dir)) or {}).get("spec") or entry.get("spec") or {}
            out.setdefault(str(run_dir), PlannedRun(str(run_dir), spec, rundir.is_run_dir(run_dir)))
        if plan is not None:
            continue
        for run_dir in rundir.run_dirs([d.parent if d.name == rundir.RECORDS else d]):
            meta = _json(rundir.meta_file(run_dir))
            if meta and isinstance(meta.get("spec"), dict):
                out.setdefault(str(run_dir), PlannedRun(str(run_dir), meta["spec"], True))
    return list(out.values())


def _cells(spec: dict[str, Any]) -> tuple[list[tuple[Any, ...]], int | None]:
    """The spec's cells and the episodes each should hold (None: all of the suite's tasks)."""
    suite = spec.get("suite")
    budgets = spec.get("budgets") or ([SUITES.get(suite).budget] if isinstance(suite, str) and suite in SUITES else [])
    tasks = len(spec["task_ids"]) if spec.get("task_ids") else spec.get("tasks")
    # a spec's identity leaves the default decoding arm out (harness.types.RunSpec.identity)
    cells = [
        (m, suite, c, int(b), int(s), k)
        for m in spec.get("models", [])
        for c in spec.get("conditions", [])
        for b in budgets
        for s in spec.get("sample_seeds", [0])
        for k in spec.get("constrain") or ["none"]
    ]
    return cells, tasks


def gaps(df: pd.DataFrame, planned: Sequence[PlannedRun]) -> list[dict[str, Any]]:
    """One row per planned cell without full results: the cell's key fields, run_dir, episodes,
    harness_errors, expected (None when the run plays all of a suite's tasks), status."""
    if df.empty:
        counts: dict[tuple[Any, ...], tuple[int, int]] = {}
    else:
        keys = df[list(CELL)].astype({C.budget: int, C.sample_seed: int})
        grouped = keys.assign(error=df[C.success].isna()).groupby(list(CELL), sort=False)["error"]
        counts = {
            k: (int(n), int(e)) for k, n, e in zip(grouped.size().index, grouped.size(), grouped.sum(), strict=True)
        }
    rows = []
    for run in planned:
        cells, expected = _cells(run.spec)
        for cell in cells:
            n, errors = counts.get(cell, (0, 0))
            if n == 0:
                status = NOT_RUN
            elif errors == n:
                status = ERRORS_ONLY
            elif expected is not None and n - errors < expected:
                status = PARTIAL
            else:
                continue
            rows.append(
                {
                    **dict(zip(CELL, cell, strict=True)),
                    "run_dir": run.run_dir,
                    "episodes": n,
                    "harness_errors": errors,
                    "expected": expected,
                    "status": status,
                    "run_started": run.started,
                }
            )
    return rows


def planned_cells(planned: Sequence[PlannedRun]) -> int:
    return sum(len(_cells(run.spec)[0]) for run in planned)
