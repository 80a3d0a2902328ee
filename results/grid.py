"""The grid a run set out to play, beside what its records hold: which cells have no results, and why.

A run directory's run.json keeps the spec that decides its grid (suite x models x conditions x
budgets x sample seeds, over its tasks). A command that plays several runs (demo) writes
`plan.json` in their folder before the first one starts, so a folder whose second run never
started still names it. A cell (model, suite, condition, budget, sample seed) is a gap when it
has no episode ("not run"), only harness errors ("harness errors only"), or fewer episodes than
its tasks ("partial"). The shards of a grid (`run --shard I/N`) each plan the cells of their own
part of the keys: plan.json names every shard with the episodes each cell of it should hold, so a
cell is counted per shard directory, a shard that never ran shows its cells as "not run", and the
grid's cells are counted once. An import plans no grid: its episodes are its files' entries (its
own section says what became of each: results.imports); a fork's grid is its fork points under its
models, conditions and seeds, whose cells run.json keeps (`fork_cells`), so an interrupted fork
shows what it has yet to play. Read from files beside the records only; nothing here imports the
harness.
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
from results.imports import provenance

CELL = (C.model, C.suite, C.condition, C.budget, C.sample_seed, C.constrain)
NOT_RUN, ERRORS_ONLY, PARTIAL = "not run", "harness errors only", "partial"


@dataclass(frozen=True)
class PlannedRun:
    run_dir: str
    spec: dict[str, Any]  # the spec's identity, as run.json and plan.json keep it
    started: bool  # the run directory holds records
    # a shard's part of the grid: "I/N", and the episodes each cell of it should hold
    shard: str | None = None
    cells: dict[tuple[Any, ...], int] | None = None


def _entry(run_dir: Path, entry: dict[str, Any], started: bool) -> PlannedRun:
    """A planned run of a plan.json entry (a shard's carries its part and its cells)."""
    spec = (_json(rundir.meta_file(run_dir)) or {}).get("spec") or entry.get("spec") or {}
    shard, cells = entry.get("shard"), entry.get("cells")
    if isinstance(shard, list) and isinstance(cells, list):
        expected = {(m, su, c, int(b), int(s), k): int(n) for m, su, c, b, s, k, n in cells}
        return PlannedRun(str(run_dir), spec, started, f"{shard[0]}/{shard[1]}", expected)
    return PlannedRun(str(run_dir), spec, started)


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
            out.setdefault(str(run_dir), _entry(run_dir, entry, rundir.is_run_dir(run_dir)))
        if plan is not None:
            continue
        for run_dir in rundir.run_dirs([d.parent if d.name == rundir.RECORDS else d]):
            meta = _json(rundir.meta_file(run_dir))
            # a shard's directory named alone: its part of the grid is in its folder's plan.json
            parent = _json(rundir.plan_file(run_dir.parent)) or {}
            mine = next((e for e in parent.get("runs", []) if e.get("dir") == run_dir.name and e.get("shard")), None)
            fork_cells = _fork_cells(meta)
            if mine is not None:
                out.setdefault(str(run_dir), _entry(run_dir, mine, True))
            elif fork_cells is not None and meta is not None:  # a fork's grid: its points x its axes
                out.setdefault(str(run_dir), PlannedRun(str(run_dir), meta["spec"], True, None, fork_cells))
            elif meta and isinstance(meta.get("spec"), dict) and not meta["spec"].get("fork") and not provenance(meta):
                # a fork's episodes are its failures' (harness.fork), an import's its files' entries
                # (results.imports, its own section), not the cross product of their axes
                out.setdefault(str(run_dir), PlannedRun(str(run_dir), meta["spec"], True))
    return list(out.values())


def _fork_cells(meta: dict[str, Any] | None) -> dict[tuple[Any, ...], int] | None:
    """A fork's planned cells and the episodes of each, as its latest session wrote them (None: not
    a fork, or one written before forks kept them)."""
    sessions = (meta or {}).get("sessions") or []
    cells = next((s.get("fork_cells") for s in reversed(sessions) if isinstance(s, dict) and s.get("fork_cells")), None)
    if not isinstance(cells, list):
        return None
    return {(m, su, c, int(b), int(s), k): int(n) for m, su, c, b, s, k, n in cells}


def _cells(spec: dict[str, Any]) -> tuple[list[tuple[Any, ...]], int | None]:
    """The spec's cells and the episodes each should hold (None: all of the suite's tasks)."""
    suite = spec.get("suite")
    budgets = spec.get("budgets") or ([SUITES.get(suite).budget] if isinstance(suite, str) and suite in SUITES else [])
    tasks = len(spec["task_ids"]) if spec.get("task_ids") else spec.get("tasks")
    # a spec's identity leaves the default decoding arm out (harness.run_spec.RunSpec.identity)
    cells = [
        (m, suite, c, int(b), int(s), k)
        for m in spec.get("models", [])
        for c in spec.get("conditions", [])
        for b in budgets
        for s in spec.get("sample_seeds", [0])
        for k in spec.get("constrain") or ["none"]
    ]
    return cells, tasks


def _counts(df: pd.DataFrame, columns: list[str]) -> dict[tuple[Any, ...], tuple[int, int]]:
    """(episodes, harness errors) per group of `columns`."""
    if df.empty:
        return {}
    keys = df[columns].astype({C.budget: int, C.sample_seed: int})
    grouped = keys.assign(error=df[C.success].isna()).groupby(columns, sort=False)["error"]
    return {k: (int(n), int(e)) for k, n, e in zip(grouped.size().index, grouped.size(), grouped.sum(), strict=True)}


def gaps(df: pd.DataFrame, planned: Sequence[PlannedRun]) -> list[dict[str, Any]]:
    """One row per planned cell without full results: the cell's key fields, run_dir, episodes,
    harness_errors, expected (None when the run plays all of a suite's tasks), status. A shard's
    cells count the episodes of its own directory against its part of the cell."""
    counts = _counts(df, list(CELL))
    per_dir = _counts(df, [*CELL, "run_dir"]) if any(r.cells for r in planned) and "run_dir" in df else {}
    rows = []
    for run in planned:
        cells, expected = _cells(run.spec)
        if run.cells is not None:
            cells = [c for c in cells if c in run.cells]
        for cell in cells:
            n, errors = per_dir.get((*cell, run.run_dir), (0, 0)) if run.cells is not None else counts.get(cell, (0, 0))
            if run.cells is not None:
                expected = run.cells[cell]
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
    """The grid's cells: a cell the shards of one grid split is counted once."""
    seen: set[tuple[Any, ...]] = set()
    for run in planned:
        grid = json.dumps(run.spec, sort_keys=True, default=str) if run.shard else run.run_dir
        seen.update((grid, *cell) for cell in _cells(run.spec)[0])
    return len(seen)


def missing_cells(planned: Sequence[PlannedRun], gap_rows: Sequence[dict[str, Any]]) -> int:
    """The planned cells without full results, a cell of a sharded grid once however many shards lack it."""
    grids = {r.run_dir: json.dumps(r.spec, sort_keys=True, default=str) if r.shard else r.run_dir for r in planned}
    return len({(grids.get(g["run_dir"], g["run_dir"]), *(g[c] for c in CELL)) for g in gap_rows})


def shards(planned: Sequence[PlannedRun]) -> dict[str, Any] | None:
    """The shards of the grid(s) planned: how many, and the directories of those that never ran."""
    parts = [r for r in planned if r.shard]
    if not parts:
        return None
    return {"planned": len(parts), "missing": [r.run_dir for r in parts if not r.started]}
