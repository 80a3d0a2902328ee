"""What a built game is, as the cache and `manifest.json` record it."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

# the generating interpreter's hash seed; part of what makes a seed reproducible
PYTHONHASHSEED = "0"


class GenParams(BaseModel):
    """Everything that decides which game is generated. The cache is keyed by it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = Field(ge=0)
    rooms: int = Field(ge=1)
    objects: int = Field(ge=0)
    quest_length: int = Field(ge=1)

    @property
    def slug(self) -> str:
        return f"r{self.rooms}-o{self.objects}-q{self.quest_length}"

    @property
    def task_id(self) -> str:
        return f"tw-{self.seed}"

    def options(self) -> dict[str, int]:
        return {"rooms": self.rooms, "objects": self.objects, "quest_length": self.quest_length}


class GameEntry(BaseModel):
    """One game: its opening as the plan prompt shows it, its walkthrough, and its file hashes."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    seed: int
    options: dict[str, int]
    objective: str
    description: str
    inventory: str
    walkthrough: list[str]
    max_score: int
    # admissible commands at the start, in TextWorld's order (a determinism check, not shown to agents)
    initial_admissible: list[str]
    # sha256 of the .z8 story file with its compile-date serial number zeroed, and of the game .json
    # without its machine-specific grammar path
    sha256: str
    json_sha256: str
    textworld_version: str

    def params(self) -> GenParams:
        return GenParams(seed=self.seed, **self.options)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    suite: str
    textworld_version: str
    pythonhashseed: str = PYTHONHASHSEED
    games: list[GameEntry]


def write_manifest(path: Path, manifest: Manifest) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(manifest.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n")
    tmp.replace(path)
    return path
