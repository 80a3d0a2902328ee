"""The records a report reads, column by column: pyarrow's JSON reader parses records.jsonl in C++
blocks, the report's columns are kept as Arrow arrays and the repair dynamics computed from the call
logs in a few array passes (results.dynamics_arrays); no record is ever a Python dict. A million
records: a few seconds and a few hundred MB, where a dict per record took a minute and 2 GB (issue 67).

It gives the frame the per-record reader (results.load) gives, or declines (`NotColumnar`) and
that reader runs instead, with its own checks and messages. It declines whatever it could read
otherwise: a line that is not one JSON object of the types the sampled records have, a blank
line, an unterminated last line, records whose fields differ from the sampled ones' (the first
lines, lines spread through the file and the last are parsed by `results.load._parse`, every
check included), a key field's value that reader refuses (results.rundir.key_error, asked of each
distinct value), an episode recorded twice, a nested value other than an empty object among the
columns kept, and a `success` that is null where its line does not say `"success":null` (a record
without one is an error, not a harness error).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from results.columns import KEY_FIELDS, C
from results.dynamics import COLUMNS as DYN_COLUMNS
from results.dynamics_arrays import CALLS_TYPE, Episodes, NotColumnar, episode_arrays
from results.heap import give_back
from results.rundir import CHECKED, DEFAULTS, key_error

__all__ = ["NotColumnar", "Layout", "FileColumns", "sample_lines", "layout_of", "read_file", "frame"]

# lines parsed one by one to learn the layout: the first ones, ones spread through the file, the last
HEAD, SPREAD = 50, 200
CHUNK = 1 << 23  # read at once to count patterns, beside every column read
BLOCK = 1 << 23
TRIM_BATCHES = 8  # the parser's blocks given back every 64 MB of records: a trim costs some ms
_FLATTENED = (C.extra, C.condition_params)
_CONFIG = pa.struct([("decoding", pa.struct([("temperature", pa.float64())]))])
_REPLAY = pa.struct([("divergence", pa.struct([("answer", pa.int64())]))])
_KEY_TYPES = {**{f: pa.string() for f in KEY_FIELDS}, C.budget: pa.int64(), C.sample_seed: pa.int64()}


def _type(values: Iterable[Any]) -> pa.DataType:
    """The Arrow type of a field from the values the sampled records hold (null: none seen; a value
    of another type later is a parse error, and the per-record reader runs)."""
    kinds = {type(v) for v in values if v is not None}
    if not kinds:
        return pa.null()
    if kinds == {bool}:
        return pa.bool_()
    if kinds == {int}:
        return pa.int64()
    if kinds <= {int, float}:
        return pa.float64()
    if kinds == {str}:
        return pa.string()
    raise NotColumnar(f"values of types {sorted(k.__name__ for k in kinds)}")


def sample_lines(file: Path) -> list[str]:
    """The lines the layout is learnt from (see the module docstring)."""
    size = file.stat().st_size
    with open(file, "rb") as f:
        lines = [f.readline() for _ in range(HEAD)]
        for i in range(1, SPREAD):
            f.seek(size * i // SPREAD)
            f.readline()
            lines.append(f.readline())
        f.seek(max(0, size - (1 << 20)))
        tail = f.read()
    if not tail.endswith(b"\n"):
        raise NotColumnar("an unterminated last line")
    lines.append(tail[:-1].rsplit(b"\n", 1)[-1] + b"\n")
    try:
        return [line.decode("utf-8") for line in lines if line.strip()]
    except UnicodeDecodeError:
        raise NotColumnar("a line that is not UTF-8") from None


@dataclass
class Layout:
    """What the sampled records share: their field names and the Arrow schema of what is read."""

    raw_keys: tuple[str, ...]
    sig: tuple[tuple[str, ...], ...]
    top: list[str]  # top-level columns kept
    flat: dict[str, list[str]]  # FLATTENED field -> its keys kept
    absent: list[str] = field(default_factory=list)  # wanted columns no sampled record has (must stay null)
    empty: list[str] = field(default_factory=list)  # kept nested columns that hold {} (counted in the text)
    schema: pa.Schema = field(default_factory=lambda: pa.schema([]))


def layout_of(records: list[dict[str, Any]], raws: list[dict[str, Any]], wanted: frozenset[str]) -> Layout:
    """The layout every sampled record has (parsed by results.load._parse: `records`; as written: `raws`)."""
    sigs = {(tuple(r), *(tuple(r.get(n) or {}) for n in _FLATTENED)) for r in records}
    if len(sigs) != 1 or len({tuple(r) for r in raws}) != 1:
        raise NotColumnar("records of several layouts")
    sig = sigs.pop()
    top = [k for k in sig[0] if k in wanted and k not in _FLATTENED and k not in DYN_COLUMNS and k != "run_dir"]
    layout = Layout(tuple(raws[0]), sig, top, {})
    fields: dict[str, pa.DataType] = {}
    for k in dict.fromkeys([*top, *KEY_FIELDS, C.success, C.run_id]):
        fields[k] = _KEY_TYPES.get(k) or (pa.bool_() if k == C.success else _type(r.get(k) for r in records))
    fields[C.calls] = CALLS_TYPE
    fields[C.config] = _CONFIG
    for name, keys in zip(_FLATTENED, sig[1:], strict=True):
        kept = [k for k in keys if f"{name}.{k}" in wanted]
        layout.flat[name] = kept
        sub: dict[str, pa.DataType] = {}
        for k in kept:
            values = [(r.get(name) or {}).get(k) for r in records]
            if any(isinstance(v, (dict, list)) for v in values):
                if any(v != {} for v in values):
                    raise NotColumnar(f"{name}.{k} holds nested values")
                sub[k] = pa.struct([])
                layout.empty.append(k)
            else:
                sub[k] = _type(values)
        # read beside the kept keys: what the dynamics need, and the wanted keys no sample has
        for k in (f.split(".", 1)[1] for f in wanted if f.startswith(name + ".")):
            if k not in sub:
                sub[k] = pa.string()
                layout.absent.append(f"{name}.{k}")
        if name == C.extra:
            sub.setdefault("action", pa.string())
            sub.setdefault("protocol", pa.string())
            if "replay" in kept:
                raise NotColumnar("an import's replay")
            sub["replay"] = _REPLAY
            layout.absent.append(f"{name}.replay")
        fields[name] = pa.struct(list(sub.items()))
    for k in wanted:
        if "." not in k and k not in fields and k not in DYN_COLUMNS and k != "run_dir":
            fields[k] = pa.null()  # a field no sampled record has must be absent from every one
    layout.schema = pa.schema(list(fields.items()))
    return layout


def _counts(file: Path, patterns: list[bytes]) -> list[int]:
    """How often each pattern occurs in the file's bytes, read into one buffer a chunk at a time
    (never whole, nor copied: 1.5 GB of records). No pattern here can overlap itself, so one that
    straddles two chunks is the seam's count less the two sides' own."""
    counts = [0] * len(patterns)
    keep = max(map(len, patterns)) - 1
    buf, tail = bytearray(CHUNK), b""
    with open(file, "rb") as f:
        while n := f.readinto(buf):
            head = bytes(buf[: min(keep, n)])
            for i, p in enumerate(patterns):
                counts[i] += buf.count(p, 0, n) + (tail + head).count(p) - tail.count(p) - head.count(p)
            tail = bytes(buf[max(0, n - keep) : n])
    return counts


@dataclass
class FileColumns:
    """One records file, read: the kept columns (Arrow chunks), the dynamics (numpy) and what the
    checks need."""

    arrays: dict[str, list[pa.Array]]
    dynamics: dict[str, list[tuple[np.ndarray, np.ndarray]]]
    rows: int


def read_file(file: Path, layout: Layout) -> FileColumns:
    """The columns of one records file under `layout`, checked as the module docstring says."""
    options = pj.ParseOptions(explicit_schema=layout.schema, unexpected_field_behavior="ignore")
    keep = [*dict.fromkeys([*layout.top, *KEY_FIELDS, C.success, C.run_id])]
    arrays: dict[str, list[pa.Array]] = {}
    dynamics: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    rows = 0
    try:
        reader = pj.open_json(file, read_options=pj.ReadOptions(block_size=BLOCK), parse_options=options)
        for n, batch in enumerate(reader, 1):
            rows += batch.num_rows
            extra = batch.column(C.extra)
            replay = extra.field("replay")
            if replay.null_count < len(replay):
                raise NotColumnar("an import's replay")
            config = batch.column(C.config)
            episodes = Episodes(
                calls=batch.column(C.calls),
                temperature=config.field("decoding").field("temperature"),
                action=extra.field("action"),
                protocol=extra.field("protocol"),
                answer=replay.field("divergence").field("answer"),
                fork=batch.column(C.fork),
            )
            for name, value in episode_arrays(episodes).items():
                dynamics.setdefault(name, []).append(value)
            for name in keep:
                arrays.setdefault(name, []).append(batch.column(name))
            for name in _FLATTENED:
                struct = batch.column(name)
                for k in [*layout.flat[name], *(a.split(".", 1)[1] for a in layout.absent if a.startswith(name))]:
                    if f"{name}.{k}" in layout.absent and k != "replay":
                        if struct.field(k).null_count < len(struct):
                            raise NotColumnar(f"{name}.{k} in some records only")
                        continue
                    if k in layout.flat[name]:
                        arrays.setdefault(f"{name}.{k}", []).append(struct.field(k))
            if not n % TRIM_BATCHES:
                # the batch's blocks given back now, not when the next batch replaces them
                del batch, extra, replay, config, episodes, struct
                give_back()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, UnicodeDecodeError) as exc:
        raise NotColumnar(str(exc)) from None
    _check_text(file, layout, arrays, rows)
    for name, default in DEFAULTS.items():  # as results.load._parse fills them
        arrays[name] = [pc.fill_null(c, default) for c in arrays[name]]
    return FileColumns(arrays, dynamics, rows)


def scored_twice(files: list[FileColumns]) -> bool:
    """Some episode has two scored records among the files (in one, or in two): the per-record
    reader names them, or reads them as repeats."""
    scored = pa.chunked_array([pc.is_valid(c) for f in files for c in f.arrays[C.success]], pa.bool_())
    # each key field's values as their index among its distinct ones, the episode one integer of
    # them (a million rows: 8 MB, where a hash grouping of the six columns took 500 MB)
    key = np.zeros(pc.sum(scored).as_py() or 0, dtype=np.int64)
    span = 1
    for name in KEY_FIELDS:
        column = pa.chunked_array([c for f in files for c in f.arrays[name]]).filter(scored)
        distinct = column.unique()
        span *= max(1, len(distinct))
        if span >= 1 << 62:
            return _scored_twice_grouped(files)
        key = key * len(distinct) + pc.index_in(column, value_set=distinct).to_numpy()
    return bool(len(key)) and len(np.unique(key)) < len(key)


def _scored_twice_grouped(files: list[FileColumns]) -> bool:
    """`scored_twice` by grouping the key columns (too many distinct episodes for one integer)."""
    parts = []
    for f in files:
        table = pa.table({k: pa.chunked_array(f.arrays[k]) for k in (*KEY_FIELDS, C.success)})
        parts.append(table.filter(pc.is_valid(table[C.success])).select(list(KEY_FIELDS)))
    if not parts:
        return False
    counts = pa.concat_tables(parts).group_by(list(KEY_FIELDS)).aggregate([([], "count_all")])
    return bool(counts.num_rows) and pc.max(counts["count_all"]).as_py() > 1


def _nulls(chunks: list[pa.Array]) -> int:
    return sum(c.null_count for c in chunks)


def _check_text(file: Path, layout: Layout, arrays: dict[str, list[pa.Array]], rows: int) -> None:
    """What Arrow cannot tell apart, told from the text: one record a line, a null success written
    as such, a kept nested column `{}` in every record; and the key fields' values."""
    for name in CHECKED:
        # the per-record reader's own checks, of each distinct value (null included): one place
        if name != C.success and any(key_error(name, v) for v in pa.chunked_array(arrays[name]).unique().to_pylist()):
            raise NotColumnar(f"a bad {name}")
    if C.constrain in layout.raw_keys and _nulls(arrays[C.constrain]):
        raise NotColumnar("constrain null")
    if C.constrain not in layout.raw_keys and _nulls(arrays[C.constrain]) < rows:
        raise NotColumnar("constrain in some records only")
    patterns = [b"\n", b'"success":null', *(f'"{k}":{{}}'.encode() for k in layout.empty)]
    lines, null_success, *empty = _counts(file, patterns)
    if lines != rows or null_success != _nulls(arrays[C.success]) or any(e != rows for e in empty):
        raise NotColumnar("the text disagrees with the columns")


def key_values(files: list[FileColumns], at: int) -> Callable[[str], set[Any]]:
    """The distinct values of a key field in one file (for the spec's bounds)."""
    return lambda name: set(pa.chunked_array(files[at].arrays[name]).unique().to_pylist())


def run_ids(columns: FileColumns) -> set[str]:
    return {str(r) for r in pa.chunked_array(columns.arrays[C.run_id]).unique().to_pylist() if r is not None}


def _series(chunks: list[pa.Array]) -> pd.Series:
    # one chunk, as a column built from a list has: pandas takes rows of a string column chunk by
    # chunk, and a report takes rows some thousand times
    series: pd.Series = pa.chunked_array(chunks).combine_chunks().to_pandas()
    return series


def _dynamic(parts: list[tuple[np.ndarray, np.ndarray]]) -> pd.Series:
    """A `dyn.*` column of the dtype a column of the per-record values gets (ints with a None:
    floats; booleans with a None: objects)."""
    values = np.concatenate([v for v, _ in parts])
    none = np.concatenate([m for _, m in parts])
    if values.dtype == object:
        return pd.Series(values, dtype="str")
    if not none.any():
        return pd.Series(values)
    if values.dtype == bool:
        out = values.astype(object)
        out[none] = None
        return pd.Series(out, dtype=object)
    return pd.Series(np.where(none, np.nan, values.astype(np.float64)))


def frame(files: list[FileColumns], run_dirs: list[str], names: tuple[str, ...]) -> pd.DataFrame:
    """The frame of the files read, its columns `names` (the per-record reader's order)."""
    series: dict[str, pd.Series] = {}
    for name in names:
        if name == "run_dir":
            series[name] = pd.Series(np.repeat(np.array(run_dirs, dtype=object), [f.rows for f in files]), dtype="str")
        elif name in DYN_COLUMNS:
            series[name] = _dynamic([part for f in files for part in f.dynamics.pop(name)])
        else:
            series[name] = _series([c for f in files for c in f.arrays.pop(name)])
        give_back()  # the column's chunks
    df = pd.DataFrame(series, copy=False)
    return df
