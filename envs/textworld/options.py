"""Run options of the TextWorld suites, validated when a run spec loads.

The paper suite fixes how its games are generated; the parametric suite also takes the generation
parameters. Both share the protocol options (how the agent plays and what a failure reports).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envs import study

# a seed list longer than this is a typo (an "A..B" with a missing digit), not a suite
MAX_SEEDS = 100_000
_RANGE = re.compile(r"^\s*(-?\d+)\s*\.\.\s*(-?\d+)\s*$")


def parse_seeds(spec: int | str | list[int] | list[int | str]) -> list[int]:
    """`20261051..20261100` (inclusive), `1,5,9`, a single number, or a list of those."""
    items = spec if isinstance(spec, list) else [spec]
    seeds: list[int] = []
    for item in items:
        if isinstance(item, bool):
            raise ValueError(f"seed {item!r} is not an integer")
        if isinstance(item, int):
            seeds.append(item)
            continue
        for part in str(item).split(","):
            match = _RANGE.match(part)
            if match:
                lo, hi = int(match.group(1)), int(match.group(2))
                if hi < lo:
                    raise ValueError(f"empty seed range {part.strip()!r}: the end is below the start")
                if hi - lo + 1 > MAX_SEEDS:
                    raise ValueError(f"seed range {part.strip()!r} holds more than {MAX_SEEDS} seeds")
                seeds.extend(range(lo, hi + 1))
            elif part.strip().lstrip("-").isdigit():
                seeds.append(int(part))
            else:
                raise ValueError(f"bad seed {part.strip()!r}; write a number, a list, or a range like 1..10")
    if not seeds:
        raise ValueError("no seeds given")
    if any(s < 0 for s in seeds):
        raise ValueError(f"seeds must be non-negative, got {min(seeds)}")
    if len(set(seeds)) != len(seeds):
        raise ValueError("a seed is listed twice")
    if len(seeds) > MAX_SEEDS:
        raise ValueError(f"more than {MAX_SEEDS} seeds")
    return seeds


def default_cache_dir() -> Path:
    """`$REPAIR_HARNESS_CACHE/textworld`, else `~/.cache/repair-harness/textworld` (never in git)."""
    root = os.environ.get("REPAIR_HARNESS_CACHE")
    base = Path(root) if root else Path.home() / ".cache" / "repair-harness"
    return base / "textworld"


class PlayOptions(BaseModel):
    """How the games are played; shared by both suites."""

    model_config = ConfigDict(extra="forbid")

    # plan: our clean plan protocol; step: one tool call per command; veriharness: the study's
    # artifact request for request (envs.textworld.veriharness)
    protocol: Literal["plan", "step", "veriharness"] = "plan"
    # how many admissible commands an invalid action reports, in the game's own order (None = all)
    k_allowed: int | None = Field(study.K_ALLOWED, ge=0)
    # off in the paper: a fenced JSON answer was a parse failure
    fence_strip: bool = False
    # how much of a rejected plan answer a retry quotes back (paper 240; None = all)
    echo_chars: int | None = Field(study.CUT, ge=0)
    max_commands: int = Field(study.MAX_COMMANDS, ge=1, le=100)
    # a command longer than this cannot be a game command; it is rejected without a lookup
    max_command_chars: int = Field(200, ge=1, le=10_000)
    cache_dir: str | None = None
    seeds: list[int] | str = study.GAME_SEEDS_SPEC

    @field_validator("seeds")
    @classmethod
    def _seeds_parse(cls, v: list[int] | str) -> list[int] | str:
        parse_seeds(v)
        return v

    def seed_list(self) -> list[int]:
        return parse_seeds(self.seeds)

    def cache_path(self) -> Path:
        return Path(self.cache_dir).expanduser() if self.cache_dir else default_cache_dir()


class PaperOptions(PlayOptions):
    """The paper suite: games fixed (3 rooms, 4 objects, quest length 2); `seeds` may pick a subset."""

    @field_validator("seeds")
    @classmethod
    def _seeds_in_paper(cls, v: list[int] | str) -> list[int] | str:
        outside = [s for s in parse_seeds(v) if s not in study.GAME_SEEDS]
        if outside:
            raise ValueError(f"seed {outside[0]} is not a paper game; allowed: {study.GAME_SEEDS_SPEC}")
        return v


class TextWorldOptions(PlayOptions):
    """The parametric suite: any seeds and generation parameters."""

    rooms: int = Field(study.ROOMS, ge=1, le=50)
    objects: int = Field(study.OBJECTS, ge=0, le=100)
    quest_length: int = Field(study.QUEST_LENGTH, ge=1, le=30)
