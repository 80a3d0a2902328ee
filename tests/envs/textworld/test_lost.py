"""`game_lost` under both protocols. Games from `textworld.make` have no fail conditions, so this
builds a small real TextWorld game with one: eating the apple loses it."""

from __future__ import annotations

import json

import pytest
import textworld
from textworld.generator.game import Event, Quest

from envs.contract import Accepted, TextAnswer, ToolCall, Violation
from envs.textworld.engine import load_model
from envs.textworld.generate import describe_game
from envs.textworld.manifest import GenParams
from envs.textworld.options import TextWorldOptions
from envs.textworld.plan import PlanEnv
from envs.textworld.step import StepEnv

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def apple_game(tmp_path_factory):
    maker = textworld.GameMaker()
    kitchen = maker.new_room("kitchen")
    maker.set_player(kitchen)
    table, apple = maker.new("s", name="table"), maker.new("f", name="apple")
    kitchen.add(table, apple)
    maker.quests = [
        Quest(
            win_events=[Event(conditions={maker.new_fact("on", apple, table)})],
            fail_events=[Event(conditions={maker.new_fact("eaten", apple)})],
        )
    ]
    maker.set_walkthrough(["take apple", "put apple on table"])
    z8 = maker.compile(str(tmp_path_factory.mktemp("apple") / "game.z8"))
    from pathlib import Path

    entry = describe_game(Path(z8), GenParams(seed=0, rooms=1, objects=2, quest_length=2))
    return entry, Path(z8)


def test_plan_protocol_reports_game_lost(apple_game) -> None:
    entry, z8 = apple_game
    env = PlanEnv(entry, load_model(z8.with_suffix(".json")), TextWorldOptions(), budget=4)
    out = env.submit(TextAnswer(text=json.dumps({"answer": {"commands": ["take apple", "eat apple", "look"]}})))
    assert isinstance(out, Violation) and out.code == "game_lost"
    assert out.location == "answer.commands[1]" and out.observed == "eat apple" and out.raw.startswith("Traceback")
    won = env.submit(TextAnswer(text=json.dumps({"answer": {"commands": entry.walkthrough}})))
    assert isinstance(won, Accepted) and won.won


def test_step_protocol_reports_the_loss(apple_game) -> None:
    entry, z8 = apple_game
    env = StepEnv(entry, z8, TextWorldOptions(protocol="step"), budget=4)
    try:
        env.reset()
        assert isinstance(env.submit(ToolCall(name="take", arguments={"object": "apple"})), Accepted)
        out = env.submit(ToolCall(name="eat", arguments={"object": "apple"}))
        assert isinstance(out, Accepted) and out.lost and out.done and not out.won
        assert "You lost" in out.observation
    finally:
        env.close()
