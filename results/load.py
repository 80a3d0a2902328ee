"""Records into one pandas frame: one row per episode, every recorded field a column.

Only the JSON lines are read (never the harness' types), so an old run stays readable after
the harness changes, as long as the key fields and `success` are there.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd

from results import columnar, heap
from results.columns import KEY_FIELDS, C
from results.dynamics import episode_columns
from results.errors import RecordsError
from results.rows import Rows
from results.run_meta import check_metas, read_meta
from results.rundir import (
    DEFAULTS,
    META,
    REQUIRED,
    PathLike,
    check_once,
    check_record,
    existing_records,
    key_text,
    read_lines,
    records_path,
    regular_records,
    utf8_name,
)

# pairing an episode of one arm with the same episode of another arm
PAIR_FIELDS = (C.suite, C.task_id, C.model, C.budget, C.sample_seed, C.constrain, C.fork)
# run.json spec field -> record field it bounds
_SPEC_BOUNDS = {"conditions": C.condition, "models": C.model, "budgets": C.budget, "sample_seeds": C.sample_seed}


@contextmanager
def _collector_paused() -> Iterator[None]:
    """JSON values cannot form reference cycles, so the cyclic collector finds nothing while
    records are parsed; left on, it rescans every record parsed so far over and over (half the
    load time at 100,000 records)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if not gc.get_freeze_count():
            # the records live as long as the frame: straight to the oldest generation (freeze,
            # then unfreeze, as gc documents), or the young-generation passes walk them all again
            gc.freeze()
            gc.unfreeze()
        if was_on:
            gc.enable()


def _parse(file: Path, no: int, line: str) -> dict[str, Any]:
    try:
        rec = json.loads(line)
    except json.JSONDecodeError as e:
        raise RecordsError(f"{file}:{no}: not a JSON record ({e.msg})") from None
    if not isinstance(rec, dict):
        raise RecordsError(f"{file}:{no}: a record must be a JSON object")
    # a key field added later, with the value every older record had (results.rundir.DEFAULTS)
    if C.constrain not in rec:
        rec[C.constrain] = DEFAULTS[C.constrain]
    if rec.get(C.fork) is None:  # an episode played from its start (harness.fork)
        rec[C.fork] = DEFAULTS[C.fork]
    check_record(rec, f"{file}:{no}")
    # the repair path in a few numbers (results.dynamics), so that a frame without the call logs has it
    rec.update(episode_columns(rec))
    return rec


def iter_records(path: PathLike) -> Iterator[dict[str, Any]]:
    """The records of one run directory (or records file), parsed and checked, one dict each; a
    cut trailing line is left out as `load` leaves it out."""
    file = existing_records(path)
    lines, _ = read_lines(file)
    for no, line in lines:
        yield _parse(file, no, line)


def read_records(path: PathLike) -> tuple[list[dict[str, Any]], int]:
    """`iter_records` as a list, and the number of cut trailing lines it left out (0 or 1)."""
    file = existing_records(path)
    lines, partial = read_lines(file)
    return [_parse(file, no, line) for no, line in lines], sum(partial)


# what a run's spec fixes besides its grid's axes: two runs of one suite that differ in any of
# them played different experiments, and their cells must not be pooled
SETTINGS = ("tool_mode", "text_calls", "feedback_cut", "env_options", "decoding", "fork")


# what a run's grid is (results.rundir._Grid): runs are repeats of one grid only where all are equal
GRID = ("suite", "models", "conditions", "budgets", "sample_seeds", "tasks", "task_ids", "fork")


def _grid(meta: dict[str, Any] | None) -> dict[str, Any]:
    spec = (meta or {}).get("spec")
    return {k: spec.get(k) for k in GRID} if isinstance(spec, dict) else {}


def _check_poolable(meta: dict[str, Any] | None, run_dir: Path, seen: dict[str, tuple[Path, dict[str, Any]]]) -> None:
    """Runs of one suite loaded together share their settings; the first difference is named."""
    spec = (meta or {}).get("spec")
    if not isinstance(spec, dict) or not isinstance(spec.get("suite"), str):
        return
    mine = {k: spec.get(k) for k in SETTINGS}
    first = seen.setdefault(spec["suite"], (run_dir, mine))
    differ = [k for k in SETTINGS if first[1][k] != mine[k]]
    if differ:
        k = differ[0]
        raise RecordsError(
            f"{first[0]} and {run_dir} played {spec['suite']} with different {k} "
            f"({_short(first[1][k])} vs {_short(mine[k])}): "
            "their episodes would be pooled into the same cells; report them separately"
        )


COMPOSITION = f"{C.condition_params}.composition"


def _check_one_meaning(df: pd.DataFrame) -> None:
    """A condition's name means one thing across the runs loaded (two plugins may each define a
    condition `mine`): its records' compositions agree, or the first two are named."""
    if COMPOSITION not in df.columns:
        return
    known = df[[C.condition, COMPOSITION]].dropna().drop_duplicates()
    twice = known[known[C.condition].duplicated(keep=False)]
    if not twice.empty:
        name = twice[C.condition].iloc[0]
        shown = sorted(map(str, twice[twice[C.condition] == name][COMPOSITION]))
        raise RecordsError(
            f"condition {name!r} means different feedback in the runs loaded ({' and '.join(shown)}): "
            "their episodes would be pooled into one cell; report them separately"
        )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _check_one_spec(run_ids: set[str], values: Callable[[str], set[Any]], file: Path) -> None:
    """One run directory holds one spec; anything else would mix experiments silently. `run_ids`:
    the run ids its records name; `values(field)`: a key field's distinct values in them."""
    if len(run_ids) > 1:
        raise RecordsError(f"{file}: records of several runs mixed (run_id {', '.join(sorted(run_ids))})")
    meta = read_meta(file.parent) or {}
    if run_ids and meta.get("run_id") is not None and str(meta["run_id"]) != min(run_ids):
        raise RecordsError(f"{file}: records belong to run {min(run_ids)}, {META} to run {meta['run_id']}")
    spec = meta.get("spec")
    if isinstance(spec, dict):
        bounds = dict(_SPEC_BOUNDS)
        if spec.get("fork"):  # a fork's budget is what each failure had left (or --budget)
            del bounds["budgets"]
        if isinstance(spec.get("suite"), str):
            spec = {**spec, "suites": [spec["suite"]]}
            bounds["suites"] = C.suite
        for spec_field, field in bounds.items():
            allowed = spec.get(spec_field)
            if not isinstance(allowed, list):
                continue
            stray = sorted({str(v) for v in values(field) if v not in allowed})
            if stray:
                raise RecordsError(
                    f"{file}: {field} {', '.join(stray)} not in the run's spec "
                    f"({', '.join(map(str, allowed))}); records of another spec are mixed in"
                )


def _check_rows(rows: Rows, lo: int, hi: int, file: Path) -> None:
    """`_check_one_spec` on the rows lo:hi of one file, then each episode recorded once."""
    run_ids = {str(r) for r in rows.run_ids[lo:hi] if r is not None}
    _check_one_spec(run_ids, lambda field: {k[KEY_FIELDS.index(field)] for k in rows.keys[lo:hi]}, file)
    check_once(
        file,
        zip(rows.keys[lo:hi], (s is not None for s in rows.success[lo:hi]), rows.lines[lo:hi], strict=True),
    )


def _load_columnar(paths: list[PathLike], columns: Iterable[str]) -> pd.DataFrame:
    """`load`'s frame of `columns` by the columnar reader (results.columnar), which declines
    (NotColumnar) whatever it could read otherwise."""
    files = [existing_records(p) for p in paths]
    heap.one_heap()
    rows = Rows(columns)
    assert rows.wanted is not None
    layout = first = None
    for file in files:
        regular_records(file)
        lines = columnar.sample_lines(file)
        try:
            sampled = [_parse(file, 0, line) for line in lines]
        except RecordsError:
            raise columnar.NotColumnar("a sampled record is refused") from None
        this = columnar.layout_of(sampled, [json.loads(line) for line in lines], rows.wanted)
        if layout is None:
            layout, first = this, sampled[0]
        elif (this.sig, this.raw_keys, this.schema) != (layout.sig, layout.raw_keys, layout.schema):
            raise columnar.NotColumnar("runs of several layouts")
    assert layout is not None and first is not None
    read = [columnar.read_file(file, layout) for file in files]
    settings: dict[str, tuple[Path, dict[str, Any]]] = {}
    for at, file in enumerate(files):
        _check_one_spec(columnar.run_ids(read[at]), columnar.key_values(read, at), file)
        _check_poolable(read_meta(file.parent), file.parent, settings)
    if columnar.scored_twice(read):
        raise columnar.NotColumnar("an episode recorded twice")
    rows.add(first, 0, "")
    run_dirs = [str(file.parent) for file in files]
    df = columnar.frame(read, run_dirs, rows.names[0])
    df[C.success] = df[C.success].astype(object)
    _check_one_meaning(df)
    df.attrs = {"run_dirs": run_dirs, "partial_lines": 0, "repeats": 1, "fields": rows.fields[0]}
    return df


def _as_paths(paths: PathLike | Iterable[PathLike]) -> list[PathLike]:
    if isinstance(paths, (str, Path)):
        return [paths]
    out = list(paths)
    if not out:
        raise RecordsError("no run directory given")
    return out


def load(
    paths: PathLike | Iterable[PathLike], columns: Iterable[str] | None = None, repeats: bool = False
) -> pd.DataFrame:
    """One row per episode from one or many run directories (or records.jsonl files).

    Columns: every recorded field; `extra` and `condition_params` are flattened into
    `extra.<key>` / `condition_params.<key>`; `run_dir` names the directory of the row.
    `df.attrs["partial_lines"]` counts ignored unterminated trailing lines.
    Raises RecordsError on a missing/empty file, a malformed line, or mixed specs.

    `columns`: keep only these (those the records have), besides the key fields, `success` and
    `run_dir`; each kept column is the one the full frame has, and every record is parsed and
    checked all the same. The other fields are dropped as each line is read, so a caller that
    reads a dozen columns (the report) does not hold the call logs of every episode.
    `df.attrs["fields"]` then names every column the full frame would have, in its order.

    `repeats`: runs that record the same episodes (one grid run again: a server that is not
    bit-deterministic, a temperature above 0) are repeats, as sample seeds are, not an error (which
    `report` makes them): every run's seeds are then read as seeds of their own ("r2:0", run 2's
    seed 0), so pairing and a noise floor count every run; `df.attrs["repeats"]` is the number of
    runs read that way (1 where no episode was recorded twice).
    """
    paths = _as_paths(paths)
    for p in paths:  # a path is text in the frame (pyarrow's strings are UTF-8)
        utf8_name(records_path(p).parent)
    check_metas(records_path(p).parent for p in paths)  # every damaged run.json named, before any record is read
    if columns is not None:
        try:
            return _load_columnar(paths, columns)
        except columnar.NotColumnar:
            pass  # the per-record reader, with its own checks and messages
    rows = Rows(columns)
    settings: dict[str, tuple[Path, dict[str, Any]]] = {}  # suite -> the first run's settings
    run_dirs: list[str] = []
    owner: dict[tuple[Any, ...], str] = {}
    grids: dict[str, dict[str, Any]] = {}  # run directory -> its grid, as run.json's spec states it
    repeated = False
    partial_total = 0
    with _collector_paused():
        for p in paths:
            file = existing_records(p)
            lo, run_dir = len(rows), str(file.parent)
            lines, partial = read_lines(file)
            for no, line in lines:
                rows.add(_parse(file, no, line), no, run_dir)
            if len(rows) == lo:
                raise RecordsError(f"{file}: no records")
            _check_rows(rows, lo, len(rows), file)
            meta = read_meta(file.parent)
            _check_poolable(meta, file.parent, settings)
            grids[run_dir] = _grid(meta)
            partial_total += sum(partial)
            run_dirs.append(run_dir)
            for key, success in zip(rows.keys[lo:], rows.success[lo:], strict=True):
                if success is not None and owner.setdefault(key, run_dir) != run_dir:
                    repeated = True
                    first, mine = grids[owner[key]], grids[run_dir]
                    if repeats and (first == mine or not first or not mine):  # the same grid, or one unsaid
                        continue
                    if repeats:  # runs of two grids overlap: no repeats of one grid, as report refuses them
                        k = next(k for k in GRID if first.get(k) != mine.get(k))
                        raise RecordsError(
                            f"episode {key_text(key)} is recorded in both {owner[key]} and {run_dir}, runs of "
                            f"different grids ({k}: {_short(first.get(k))} vs {_short(mine.get(k))}), not repeats "
                            "of one: load those runs separately"
                        )
                    raise RecordsError(
                        f"episode {key_text(key)} is recorded in both {owner[key]} and {run_dir}; "
                        "load those runs separately"
                    )
        df = rows.frame()
    # success stays object (True/False/None): a harness error is neither
    df[C.success] = df[C.success].astype(object)
    _check_one_meaning(df)
    if repeated:
        run_number = {run_dir: i for i, run_dir in enumerate(run_dirs, 1)}
        df[C.sample_seed] = [f"r{run_number[d]}:{s}" for d, s in zip(df["run_dir"], df[C.sample_seed], strict=True)]
    df.attrs = {"run_dirs": run_dirs, "partial_lines": partial_total, "repeats": len(run_dirs) if repeated else 1}
    if columns is not None:
        # the full frame's column order: each layout's names in turn, a name where it first appears
        df.attrs["fields"] = tuple(dict.fromkeys(name for names in rows.fields for name in names))
    return df


def no_records(columns: Iterable[str]) -> pd.DataFrame:
    """The frame of runs that hold no record (imports whose entries were all skipped,
    results.imports): `columns`, no row; the report of it shows what run.json says."""
    df = pd.DataFrame({c: pd.Series([], dtype=object) for c in dict.fromkeys([*REQUIRED, *columns, "run_dir"])})
    df.attrs = {"run_dirs": [], "partial_lines": 0}
    return df
