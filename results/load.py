"""Records into one pandas frame: one row per episode, every recorded field a column.

Only the JSON lines are read (never the harness' types), so an old run stays readable after
the harness changes, as long as the key fields and `success` are there.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pandas as pd

from results.errors import RecordsError

KEY_FIELDS = ("suite", "task_id", "model", "condition", "budget", "sample_seed")
# pairing an episode of one arm with the same episode of another arm
PAIR_FIELDS = ("suite", "task_id", "model", "budget", "sample_seed")
REQUIRED = (*KEY_FIELDS, "success")
FLATTENED = ("extra", "condition_params")
# run.json spec field -> record field it bounds
_SPEC_BOUNDS = {"conditions": "condition", "models": "model", "budgets": "budget", "sample_seeds": "sample_seed"}

PathLike = str | Path


def records_path(path: PathLike) -> Path:
    p = Path(path)
    if p.is_dir():
        return p / "records.jsonl"
    if p.exists() or p.name.endswith(".jsonl"):
        return p
    raise RecordsError(f"{p}: no such run directory or records file")


def _check_types(rec: dict[str, Any], where: str) -> None:
    missing = [f for f in REQUIRED if f not in rec]
    if missing:
        raise RecordsError(f"{where}: record lacks the key field(s) {', '.join(missing)}")
    for f in ("suite", "task_id", "model", "condition"):
        if not isinstance(rec[f], str) or not rec[f]:
            raise RecordsError(f"{where}: {f} must be a non-empty string, got {rec[f]!r}")
    for f in ("budget", "sample_seed"):
        if isinstance(rec[f], bool) or not isinstance(rec[f], int):
            raise RecordsError(f"{where}: {f} must be an integer, got {rec[f]!r}")
    if rec["success"] not in (True, False, None):
        raise RecordsError(f"{where}: success must be true, false or null, got {rec['success']!r}")


def read_records(path: PathLike) -> tuple[list[dict[str, Any]], int]:
    """The records of one file, and how many trailing partial lines were ignored (0 or 1)."""
    file = records_path(path)
    if not file.exists():
        raise RecordsError(f"{file.parent}: no records.jsonl (not a run directory, or nothing ran yet)")
    text = file.read_text(encoding="utf-8")
    lines = text.split("\n")
    partial = 0
    # a run killed mid-write leaves an unterminated last line; that episode is not recorded
    if lines and lines[-1].strip() and not text.endswith("\n"):
        try:
            json.loads(lines[-1])
        except json.JSONDecodeError:
            lines, partial = lines[:-1], 1
    records = []
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as e:
            raise RecordsError(f"{file}:{no}: not a JSON record ({e.msg})") from None
        if not isinstance(rec, dict):
            raise RecordsError(f"{file}:{no}: a record must be a JSON object")
        _check_types(rec, f"{file}:{no}")
        rec["_line"] = no
        records.append(rec)
    if not records:
        raise RecordsError(f"{file}: no records")
    return records, partial


def _read_spec(run_dir: Path) -> dict[str, Any] | None:
    meta = run_dir / "run.json"
    if not meta.exists():
        return None
    try:
        data = json.loads(meta.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise RecordsError(f"{meta}: not valid JSON ({e.msg})") from None
    return data if isinstance(data, dict) else None


def _check_one_spec(records: list[dict[str, Any]], file: Path) -> None:
    """One run directory holds one spec; anything else would mix experiments silently."""
    run_ids = sorted({str(r["run_id"]) for r in records if r.get("run_id") is not None})
    if len(run_ids) > 1:
        raise RecordsError(f"{file}: records of several runs mixed (run_id {', '.join(run_ids)})")
    meta = _read_spec(file.parent) or {}
    if run_ids and meta.get("run_id") is not None and str(meta["run_id"]) != run_ids[0]:
        raise RecordsError(f"{file}: records belong to run {run_ids[0]}, run.json to run {meta['run_id']}")
    spec = meta.get("spec")
    if isinstance(spec, dict):
        bounds = dict(_SPEC_BOUNDS)
        if isinstance(spec.get("suite"), str):
            spec = {**spec, "suites": [spec["suite"]]}
            bounds["suites"] = "suite"
        for spec_field, field in bounds.items():
            allowed = spec.get(spec_field)
            if not isinstance(allowed, list):
                continue
            stray = sorted({str(r[field]) for r in records if r[field] not in allowed})
            if stray:
                raise RecordsError(
                    f"{file}: {field} {', '.join(stray)} not in the run's spec "
                    f"({', '.join(map(str, allowed))}); records of another spec are mixed in"
                )
    seen: dict[tuple, int] = {}
    for r in records:
        if r["success"] is None:  # a harness error may be retried on resume
            continue
        key = tuple(r[f] for f in KEY_FIELDS)
        if key in seen:
            raise RecordsError(f"{file}: episode {'|'.join(map(str, key))} recorded twice (lines {seen[key]} and {r['_line']})")
        seen[key] = r["_line"]


def _flatten(rec: dict[str, Any]) -> dict[str, Any]:
    row = {k: v for k, v in rec.items() if k not in FLATTENED and k != "_line"}
    for name in FLATTENED:
        value = rec.get(name) or {}
        if not isinstance(value, dict):
            raise RecordsError(f"record line {rec['_line']}: {name} must be an object, got {value!r}")
        for k, v in value.items():
            row[f"{name}.{k}"] = v
    return row


def _as_paths(paths: PathLike | Iterable[PathLike]) -> list[PathLike]:
    if isinstance(paths, (str, Path)):
        return [paths]
    out = list(paths)
    if not out:
        raise RecordsError("no run directory given")
    return out


def load(paths: PathLike | Iterable[PathLike]) -> pd.DataFrame:
    """One row per episode from one or many run directories (or records.jsonl files).

    Columns: every recorded field; `extra` and `condition_params` are flattened into
    `extra.<key>` / `condition_params.<key>`; `run_dir` names the directory of the row.
    `df.attrs["partial_lines"]` counts ignored unterminated trailing lines.
    Raises RecordsError on a missing/empty file, a malformed line, or mixed specs.
    """
    rows: list[dict[str, Any]] = []
    owner: dict[tuple, str] = {}
    partial_total = 0
    dirs = []
    for p in _as_paths(paths):
        file = records_path(p)
        records, partial = read_records(file)
        _check_one_spec(records, file)
        partial_total += partial
        run_dir = str(file.parent)
        dirs.append(run_dir)
        for rec in records:
            key = tuple(rec[f] for f in KEY_FIELDS)
            if rec["success"] is not None:
                if key in owner and owner[key] != run_dir:
                    raise RecordsError(
                        f"episode {'|'.join(map(str, key))} is recorded in both {owner[key]} and {run_dir}; "
                        "load those runs separately"
                    )
                owner[key] = run_dir
            row = _flatten(rec)
            row["run_dir"] = run_dir
            rows.append(row)
    df = pd.DataFrame(rows)
    # success stays object (True/False/None): a harness error is neither
    df["success"] = df["success"].astype(object)
    df.attrs = {"run_dirs": dirs, "partial_lines": partial_total}
    return df
