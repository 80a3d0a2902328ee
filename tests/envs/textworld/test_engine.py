"""The plan protocol replays on TextWorld's rule engine instead of the Z-machine. This checks,
over the whole paper suite, that both give the same admissible commands, wins and losses."""

from __future__ import annotations

import random

import pytest

from envs.textworld import cache
from envs.textworld.engine import GameModel, NotAdmissible, load_model
from envs.textworld.options import PaperOptions
from envs.textworld.suite import PaperTextWorld
from envs.textworld.zmachine import ZSession

pytestmark = pytest.mark.slow
WALKS_PER_GAME = 3
WALK_LENGTH = 4


@pytest.fixture(scope="module")
def games():
    options = PaperOptions()
    suite = PaperTextWorld()
    manifest = suite.build(options)
    return [(e, cache.game_files(options.cache_path(), e.params())) for e in manifest.games]


def compare(model: GameModel, z8, commands: list[str]) -> int:
    """Play `commands` on both engines, asserting they agree after every one; returns moves played."""
    replay = model.start()
    with ZSession(z8) as z:
        assert replay.admissible == z.admissible
        for i, command in enumerate(commands):
            state = z.step(command)
            replay.step(command)
            assert replay.admissible == z.admissible, (z8, commands[: i + 1])
            assert (replay.won, replay.lost) == (bool(state["won"]), bool(state["lost"])), (z8, commands[: i + 1])
            if replay.won or replay.lost:
                return i + 1
    return len(commands)


def test_engines_agree_on_walkthroughs_and_random_walks(games) -> None:
    rng = random.Random(3101)
    for entry, files in games:
        model = load_model(files.json)
        assert model.initial_admissible == entry.initial_admissible
        assert compare(model, files.z8, entry.walkthrough) == len(entry.walkthrough)
        for _ in range(WALKS_PER_GAME):
            replay, walk = model.start(), []
            for _ in range(WALK_LENGTH):
                walk.append(rng.choice(replay.admissible))
                replay.step(walk[-1])
                if replay.won:
                    break
            compare(model, files.z8, walk)


def test_replays_are_independent(games) -> None:
    entry, files = games[0]
    model = load_model(files.json)
    a = model.start()
    a.step(entry.walkthrough[0])
    b = model.start()
    assert b.admissible == entry.initial_admissible and b.moves == 0
    with pytest.raises(NotAdmissible):
        b.step(entry.walkthrough[1])
    assert load_model(files.json) is model  # loaded once per process
