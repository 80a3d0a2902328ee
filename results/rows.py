"""Records as value tuples, one per row, turned into a frame's columns once (results.load)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from operator import itemgetter
from typing import Any

import numpy as np
import pandas as pd

from results.columns import KEY_FIELDS, C
from results.errors import RecordsError
from results.rundir import REQUIRED

FLATTENED = (C.extra, C.condition_params)
# a field a record lacks (as against one recorded as null): NaN, as pandas fills a missing key
ABSENT = math.nan

_KEY_OF = itemgetter(*KEY_FIELDS)


class _Pick:
    """The values at some positions of a dict, as a tuple (any number of positions)."""

    __slots__ = ("positions",)

    def __init__(self, positions: list[int]) -> None:
        self.positions = positions

    def __call__(self, d: dict[str, Any]) -> tuple[Any, ...]:
        values = tuple(d.values())
        return tuple(values[i] for i in self.positions)


class Rows:
    """Records kept as value tuples, one per row, beside the few field layouts they share, and
    turned into columns once at the end. A dict per row costs several times the values' memory
    at 100,000 records, and Python work per field several seconds; here the per-row work is a
    handful of C-level tuple operations."""

    def __init__(self, columns: Iterable[str] | None = None) -> None:
        # the columns to keep (None: all); the key fields and success are kept in any case
        self.wanted = None if columns is None else frozenset(columns) | set(REQUIRED)
        # layout (the field names, nested ones included) -> (layout id, getter of the kept fields,
        # getters of the kept keys of each FLATTENED field, None where all are kept)
        self.layouts: dict[tuple[tuple[str, ...], ...], tuple[int, itemgetter[Any], tuple[_Pick | None, ...]]] = {}
        self.names: list[tuple[str, ...]] = []  # the column names of each layout
        self.fields: list[tuple[str, ...]] = []  # ... and those it would have without `columns`
        self.values: list[tuple[Any, ...]] = []
        self.layout_of: list[int] = []
        self.keys: list[tuple[Any, ...]] = []  # the episode key of each row, for the checks
        self.success: list[Any] = []
        self.run_ids: list[Any] = []
        self.lines: list[int] = []
        self.shared: dict[tuple[str, ...], tuple[str, ...]] = {}  # one copy of each key tuple of nested dicts
        self.nested: list[list[int]] = []  # per layout, the positions whose values get shared keys

    def __len__(self) -> int:
        return len(self.values)

    def _layout(self, sig: tuple[tuple[str, ...], ...]) -> tuple[int, itemgetter[Any], tuple[_Pick | None, ...]]:
        top, *nested = sig
        wanted = self.wanted
        kept = [i for i, k in enumerate(top) if k not in FLATTENED and k not in ("_line", "run_dir")]
        flat = [[f"{n}.{k}" for k in keys] for n, keys in zip(FLATTENED, nested, strict=True)]
        self.fields.append((*(top[i] for i in kept), *(name for names in flat for name in names), "run_dir"))
        picks: list[_Pick | None] = [None] * len(FLATTENED)
        if wanted is not None:
            kept = [i for i in kept if top[i] in wanted]
            for at, names in enumerate(flat):
                keep = [j for j, name in enumerate(names) if name in wanted]
                if len(keep) < len(names):
                    picks[at], flat[at] = _Pick(keep), [names[j] for j in keep]
        self.names.append((*(top[i] for i in kept), *(name for names in flat for name in names), "run_dir"))
        layout = self.layouts[sig] = (len(self.names) - 1, itemgetter(*kept), tuple(picks))
        return layout

    def _share(self, value: Any) -> Any:
        """An equal copy of a dict or list field whose dict keys are shared with the other
        records': json makes new key strings for every record, 1 KB a record for the call logs
        alone. A dict's dict values are shared likewise; the dicts of a list (the call logs) get
        shared keys, their values stay as they are; a list of anything else is left alone."""
        shared = self.shared
        if type(value) is list:
            if not value or type(value[0]) is not dict:
                return value
            return [
                dict(zip(shared.setdefault(keys := tuple(d), keys), d.values(), strict=True)) if type(d) is dict else d
                for d in value
            ]
        if type(value) is not dict:  # this row holds a scalar where its layout's first row held a dict or list
            return value
        keys = tuple(value)
        return dict(
            zip(
                shared.setdefault(keys, keys),
                [self._share(v) if type(v) is dict else v for v in value.values()],
                strict=True,
            )
        )

    def add(self, rec: dict[str, Any], line: int, run_dir: str) -> None:
        """Every field a column; `extra` and `condition_params` flattened after the others, then
        `run_dir`: the columns a frame built from one flattened dict per row would have."""
        nested = []
        for name in FLATTENED:
            value = rec.get(name) or {}
            if not isinstance(value, dict):
                raise RecordsError(f"record line {line}: {name} must be an object, got {value!r}")
            nested.append(value)
        sig = (tuple(rec), *map(tuple, nested))
        layout_id, kept, picks = self.layouts.get(sig) or self._layout(sig)
        # REQUIRED fields are always kept, so `kept` picks several values and returns a tuple
        values = kept(tuple(rec.values()))
        if layout_id == len(self.nested):  # where the layout's first row holds dicts and lists (only a saving)
            self.nested.append([i for i, v in enumerate(values) if type(v) in (dict, list)])
        if self.nested[layout_id]:
            values = list(values)
            for i in self.nested[layout_id]:
                values[i] = self._share(values[i])
        extra, params = nested  # FLATTENED's two fields, unpacked without a generator per row
        pick_extra, pick_params = picks
        self.values.append(
            (
                *values,
                *(pick_extra(extra) if pick_extra else extra.values()),
                *(pick_params(params) if pick_params else params.values()),
                run_dir,
            )
        )
        self.layout_of.append(layout_id)
        self.keys.append(_KEY_OF(rec))
        self.success.append(rec[C.success])
        self.run_ids.append(rec.get(C.run_id))
        self.lines.append(line)

    def _columns(self) -> dict[str, list[Any]]:
        """One list per column (the row tuples are dropped); a name repeated in a layout (a
        flattened name that is also a field) takes the later value."""
        values, self.values = self.values, []
        if len(self.names) == 1:  # the usual case: every record has the same fields
            return dict(zip(self.names[0], map(list, zip(*values, strict=True)), strict=True))
        layout_of = np.asarray(self.layout_of)
        arrays: dict[str, np.ndarray] = {}
        for layout_id, names in enumerate(self.names):
            rows = np.flatnonzero(layout_of == layout_id)
            for name, col in zip(names, zip(*(values[i] for i in rows), strict=True), strict=True):
                if name not in arrays:
                    arrays[name] = np.full(len(values), ABSENT, dtype=object)
                # fromiter keeps each value whole (a list value stays one object, not a row of an array)
                arrays[name][rows] = np.fromiter(col, dtype=object, count=len(rows))
        return {name: arr.tolist() for name, arr in arrays.items()}

    def frame(self) -> pd.DataFrame:
        columns = self._columns()
        series = {}
        for name in list(columns):
            # column by column, so each column's Python values (strings above all) are freed as
            # soon as pandas holds its own copy; the same dtypes as a frame built from the lists
            series[name] = pd.Series(columns.pop(name))
        return pd.DataFrame(series, copy=False)
