"""Building the paper suite: the cache, the manifest, determinism, broken caches."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from envs.study import GAME_SEEDS as PAPER_SEEDS
from envs.textworld import cache
from envs.textworld.errors import GameGenerationError
from envs.textworld.manifest import GenParams, Manifest, write_manifest
from envs.textworld.options import PaperOptions, TextWorldOptions, parse_seeds
from envs.textworld.suite import PaperTextWorld, TextWorld, game_suite

pytestmark = pytest.mark.slow

# The published artifact's metadata for game 20261051 (jaideepray1989/veriharness,
# data/benchmarks/textworld/metadata/textworld-20261051.json): our generation must reproduce it.
PAPER_51 = {
    "objective": "Welcome to another fast paced round of TextWorld! First thing I need you to do is to make an "
    "attempt to move east. If you can get through with that, lift the worm from the floor of the bedroom. "
    "Got that? Good!",
    "inventory": "You are carrying: a non-euclidean latchkey.",
    "description_start": "-= Study =-\nYou find yourself in a study. A normal one.",
    "max_score": 1,
}
# ... and for 20261079, the one paper game whose walkthrough is a single command
PAPER_79 = {
    "objective": "I hope you're ready to go into rooms and interact with objects, because you've just entered "
    "TextWorld! Your task for today is to eat the sandwich.",
    "description": "-= Playroom =-\nYou've just shown up in a playroom.\n\n\n\nYou don't like doors? Why not try "
    "going east, that entranceway is unblocked.",
    "inventory": "You are carrying: a sandwich and a passkey.",
}


@pytest.fixture(scope="module")
def paper() -> Manifest:
    return PaperTextWorld().build(PaperOptions())


def test_paper_suite_has_the_50_games(paper: Manifest) -> None:
    assert [g.seed for g in paper.games] == list(range(20261051, 20261101))
    assert [g.task_id for g in paper.games][:2] == ["tw-20261051", "tw-20261052"]
    for g in paper.games:
        assert g.options == {"rooms": 3, "objects": 4, "quest_length": 2}
        assert len(g.walkthrough) == (1 if g.seed == 20261079 else 2), g.seed
        assert g.max_score >= 1 and g.objective and g.description and g.inventory
        assert len(g.sha256) == 64 and len(g.json_sha256) == 64
        assert g.walkthrough[0] in g.initial_admissible
    assert len({g.sha256 for g in paper.games}) == 50


def test_games_match_the_published_artifact(paper: Manifest) -> None:
    g = paper.games[0]
    assert g.objective == PAPER_51["objective"]
    assert g.inventory == PAPER_51["inventory"]
    assert g.description.startswith(str(PAPER_51["description_start"]))
    assert g.max_score == PAPER_51["max_score"]
    assert g.walkthrough == ["go east", "take worm"]
    g79 = paper.games[20261079 - 20261051]
    assert (g79.objective, g79.description, g79.inventory) == (
        PAPER_79["objective"],
        PAPER_79["description"],
        PAPER_79["inventory"],
    )
    assert g79.walkthrough == ["eat sandwich"]


def test_manifest_round_trips(paper: Manifest, tmp_path) -> None:
    path = write_manifest(tmp_path / "m" / "manifest.json", paper)
    again = Manifest.model_validate_json(path.read_text())
    assert again == paper
    raw = json.loads(path.read_text())
    assert raw["suite"] == "paper-textworld" and raw["pythonhashseed"] == "0"
    assert set(raw["games"][0]) >= {
        "seed",
        "options",
        "objective",
        "description",
        "inventory",
        "walkthrough",
        "max_score",
        "sha256",
    }


def test_cached_build_does_not_regenerate(paper: Manifest) -> None:
    generated = []
    PaperTextWorld().build(PaperOptions(seeds="20261051..20261055"), on_done=lambda e, fresh: generated.append(fresh))
    assert generated == [False] * 5


def test_same_seed_regenerated_elsewhere_gives_the_same_entry(paper: Manifest, tmp_path) -> None:
    # a fresh interpreter with a different hash seed drives the build into an empty cache
    code = (
        "import sys, pathlib; from envs.textworld.cache import ensure; from envs.textworld.manifest import GenParams;"
        "e, _ = ensure(pathlib.Path(sys.argv[1]), GenParams(seed=20261077, rooms=3, objects=4, quest_length=2));"
        "print(e.model_dump_json())"
    )
    env = {**__import__("os").environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, env=env, timeout=600
    )
    assert done.returncode == 0, done.stderr
    fresh = json.loads(done.stdout.strip().splitlines()[-1])
    assert fresh == paper.games[20261077 - 20261051].model_dump(mode="json")


def test_broken_cached_game_is_regenerated(paper: Manifest, tmp_path) -> None:
    params = GenParams(seed=20261052, rooms=3, objects=4, quest_length=2)
    src = cache.game_files(PaperOptions().cache_path(), params)
    dst = cache.game_files(tmp_path, params)
    shutil.copytree(src.dir, dst.dir)
    assert cache.load_cached(tmp_path, params) == paper.games[1]
    dst.z8.write_bytes(dst.z8.read_bytes()[:1000])  # truncated story file
    assert cache.load_cached(tmp_path, params) is None
    entry, files = cache.ensure(tmp_path, params)
    assert entry == paper.games[1]
    assert files.z8.stat().st_size > 1000
    files.entry.write_text("{not json")
    assert cache.load_cached(tmp_path, params) is None


def test_generation_failure_names_the_seed(tmp_path) -> None:
    with pytest.raises(GameGenerationError, match="seed 424242"):
        cache.generate(tmp_path, GenParams(seed=424242, rooms=3, objects=4, quest_length=2), timeout_s=0.05)
    assert not [p for p in tmp_path.rglob(".*")]  # the half-made game was removed


def test_seed_specs_and_options() -> None:
    assert parse_seeds("3..5") == [3, 4, 5]
    mixed: list[int | str] = [7, "1,2"]
    assert parse_seeds(mixed) == [7, 1, 2]
    assert PaperOptions().seed_list() == list(PAPER_SEEDS)
    for bad in ("5..1", "x", "1,1", "-3"):
        with pytest.raises(ValueError):
            parse_seeds(bad)
    with pytest.raises(ValueError, match="not a paper game"):
        PaperOptions(seeds="1..3")
    with pytest.raises(ValueError):
        PaperOptions.model_validate({"rooms": 5})  # the paper suite has fixed parameters
    with pytest.raises(ValueError):
        TextWorldOptions(protocol="chat")
    assert TextWorldOptions(seeds="1..3", rooms=5).rooms == 5


def test_unknown_suite_names_the_allowed_ones() -> None:
    with pytest.raises(ValueError, match=r"'nope'.*paper-textworld, textworld"):
        game_suite("nope")
    assert isinstance(game_suite("textworld"), TextWorld)


def test_game_json_hash_does_not_depend_on_where_textworld_is_installed(paper: Manifest, tmp_path) -> None:
    from envs.textworld.generate import sha256_game_json

    src = cache.game_files(
        PaperOptions().cache_path(), GenParams(seed=20261051, rooms=3, objects=4, quest_length=2)
    ).json
    data = json.loads(src.read_text())
    assert data["KB"]["text_grammars_path"].endswith("text_grammars")
    data["KB"]["text_grammars_path"] = (
        "/elsewhere/venv/lib/python3.11/site-packages/textworld/generator/data/text_grammars"
    )
    moved = tmp_path / "game.json"
    moved.write_text(json.dumps(data))
    assert sha256_game_json(moved) == sha256_game_json(src) == paper.games[0].json_sha256
    data["quests"] = []
    moved.write_text(json.dumps(data))
    assert sha256_game_json(moved) != paper.games[0].json_sha256
