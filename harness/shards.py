"""Shards: a grid split over machines (`run --shard I/N`), each part in a run directory of its own.

A key belongs to shard `sha256(key id) mod N`: the same partition on every machine, and a key
keeps its shard when the grid grows (more tasks, models, conditions). Shard I of `--out DIR`
plays into `DIR/shard-I-of-N` (one writer per directory, as every run), and writes `DIR/plan.json`
naming all N shards with the cells each should hold, so that `report DIR` counts each episode once
and lists a shard that never ran as planned cells without results (results.grid).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from envs.errors import UserError
from results import rundir


class EpisodeKey(Protocol):
    """What a shard reads of an episode's key (harness.types.EpisodeKey; harness.run_spec imports this
    module for --shard's syntax, and types the spec's module: a protocol here, so they make no circle)."""

    @property
    def model(self) -> str: ...
    @property
    def suite(self) -> str: ...
    @property
    def condition(self) -> str: ...
    @property
    def budget(self) -> int: ...
    @property
    def sample_seed(self) -> int: ...
    @property
    def constrain(self) -> str: ...

    def id(self) -> str: ...


class ShardError(UserError):
    """A --shard that is not I/N with 0 <= I < N."""


def parse(text: str) -> tuple[int, int]:
    """ "2/8" -> (2, 8)."""
    index, sep, count = text.strip().partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        i, n = -1, 0
    if not sep or n < 1 or not 0 <= i < n:
        raise ShardError(f"--shard takes I/N with 0 <= I < N (e.g. 0/4 ... 3/4), got {text!r}")
    return i, n


def shard_of(key: EpisodeKey, count: int) -> int:
    return int.from_bytes(hashlib.sha256(key.id().encode()).digest()[:8], "big") % count


def directory(out: str | Path, index: int, count: int) -> Path:
    return Path(out) / f"shard-{index}-of-{count}"


def cells(keys: Iterable[EpisodeKey]) -> list[list[Any]]:
    """[model, suite, condition, budget, sample_seed, constrain, episodes] per cell of `keys`."""
    counted = Counter((k.model, k.suite, k.condition, k.budget, k.sample_seed, k.constrain) for k in keys)
    return [[*cell, n] for cell, n in sorted(counted.items(), key=lambda kv: json.dumps(kv[0]))]


def plan_entries(keys: Sequence[EpisodeKey], count: int, identity: dict[str, Any]) -> list[dict[str, Any]]:
    """plan.json's runs: every shard's directory, spec identity and cells."""
    parts: list[list[EpisodeKey]] = [[] for _ in range(count)]
    for key in keys:
        parts[shard_of(key, count)].append(key)
    return [
        {"dir": directory("", i, count).name, "spec": identity, "shard": [i, count], "cells": cells(part)}
        for i, part in enumerate(parts)
    ]


def write_plan(folder: Path, entries: list[dict[str, Any]], writer: int) -> None:
    """The folder's plan.json, unless it already says the same (every shard writes the same; each
    through a file of its own, `writer` its index, so that shards starting at once never collide)."""
    path = rundir.plan_file(folder)
    try:
        if json.loads(path.read_text(encoding="utf-8")).get("runs") == json.loads(json.dumps(entries, default=str)):
            return
    except (OSError, ValueError, AttributeError):
        pass
    tmp = path.with_suffix(f".{writer}.tmp")
    tmp.write_text(json.dumps({"runs": entries}, indent=2, default=str), encoding="utf-8")
    tmp.replace(path)
