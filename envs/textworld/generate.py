"""Generate one game. Run as `python -m envs.textworld.generate` in a child process.

The child gets a fixed PYTHONHASHSEED so that generation cannot depend on set/dict ordering of
the calling process; `envs.textworld.cache` is the only caller.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from importlib.metadata import version
from pathlib import Path

import textworld

from envs.textworld.engine import GameModel
from envs.textworld.manifest import GameEntry, GenParams
from envs.textworld.zmachine import INFOS

STORY_NAME = "game"
# Z-machine header bytes 0x12..0x17 hold the serial number, which Inform sets to the compile
# date; the header checksum starts at 0x40, so zeroing it changes nothing the game does.
_SERIAL = slice(0x12, 0x18)


def normalise_serial(z8: Path) -> None:
    data = bytearray(z8.read_bytes())
    data[_SERIAL] = b"000000"
    z8.write_bytes(bytes(data))


def sha256_file(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def sha256_game_json(path: Path) -> str:
    """The game .json's hash without `KB.text_grammars_path`, the absolute path of TextWorld's
    grammar folder in site-packages: with it, the same game hashed differently in every
    virtual environment (seen: a CI clone disagreed with the developer's checkout)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    data.get("KB", {}).pop("text_grammars_path", None)
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def generate_into(params: GenParams, dest: Path) -> Path:
    """Make and compile the game into `dest/game.{z8,json,ni}`; returns the .z8 path."""
    options = textworld.GameOptions()
    options.seeds = params.seed
    options.nb_rooms = params.rooms
    options.nb_objects = params.objects
    options.quest_length = params.quest_length
    options.path = str(dest / f"{STORY_NAME}.z8")
    options.force_recompile = True
    game_file, _ = textworld.make(options)
    z8 = Path(game_file)
    normalise_serial(z8)
    return z8


def describe_game(z8: Path, params: GenParams) -> GameEntry:
    """Play the compiled game once: read its opening and check that its walkthrough wins,
    on the Z-machine and on the pure-Python engine the plan protocol replays with."""
    env = textworld.start(str(z8), INFOS)
    try:
        state = env.reset()
        walkthrough = list(state["extra.walkthrough"] or [])
        entry = GameEntry(
            task_id=params.task_id,
            seed=params.seed,
            options=params.options(),
            objective=state.objective,
            description=state.description,
            inventory=state.inventory,
            walkthrough=walkthrough,
            max_score=int(state.max_score),
            initial_admissible=list(state.admissible_commands),
            sha256=sha256_file(z8),
            json_sha256=sha256_game_json(z8.with_suffix(".json")),
            textworld_version=version("textworld"),
        )
        for command in walkthrough:
            state, _, _ = env.step(command)
        if not state.won:
            raise RuntimeError(f"seed {params.seed}: the walkthrough {walkthrough} does not win on the Z-machine")
    finally:
        env.close()
    replay = GameModel(z8.with_suffix(".json")).start()
    for command in walkthrough:
        replay.step(command)
    if not replay.won:
        raise RuntimeError(f"seed {params.seed}: the walkthrough {walkthrough} does not win on the Python engine")
    return entry


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--rooms", type=int, required=True)
    ap.add_argument("--objects", type=int, required=True)
    ap.add_argument("--quest-length", type=int, required=True)
    ap.add_argument("--dest", type=Path, required=True)
    a = ap.parse_args(argv)
    params = GenParams(seed=a.seed, rooms=a.rooms, objects=a.objects, quest_length=a.quest_length)
    a.dest.mkdir(parents=True, exist_ok=True)
    entry = describe_game(generate_into(params, a.dest), params)
    (a.dest / "entry.json").write_text(entry.model_dump_json(indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
