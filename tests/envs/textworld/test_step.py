"""The step protocol: typed tools from command templates, state kept across calls."""

from __future__ import annotations

import pytest

from envs.contract import Accepted, EpisodeContext, Outcome, Task, TextAnswer, ToolCall, Violation
from envs.textworld.options import PaperOptions
from envs.textworld.step import StepEnv
from envs.textworld.suite import PaperTextWorld
from envs.textworld.tools import call_for, derive_tools

pytestmark = pytest.mark.slow
SUITE = PaperTextWorld()
STEP = PaperOptions(protocol="step")


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return SUITE.tasks(PaperOptions())


@pytest.fixture()
def env(tasks):
    e = SUITE.make(tasks[0], STEP, EpisodeContext(budget=4))
    assert isinstance(e, StepEnv)
    e.reset()
    yield e
    e.close()


def accepted(out: Outcome) -> Accepted:
    assert isinstance(out, Accepted), out
    return out


def rejected(out: Outcome) -> Violation:
    assert isinstance(out, Violation), out
    return out


def call(env: StepEnv, command: str) -> ToolCall:
    found = call_for(env.tools, command)
    assert found, command
    return ToolCall(name=found[0], arguments=found[1])


def test_the_walkthrough_wins_every_paper_game_with_tool_calls(tasks: list[Task]) -> None:
    for task in tasks:
        env = SUITE.make(task, STEP, EpisodeContext(budget=4))
        assert isinstance(env, StepEnv)
        try:
            opening = env.reset()
            assert opening.history == "full" and opening.accepts == frozenset({"tool"})
            names = {t.name for t in opening.tools}
            assert {
                "go",
                "take",
                "drop",
                "open",
                "close",
                "put",
                "insert",
                "unlock",
                "lock",
                "eat",
                "examine",
                "look",
                "inventory",
            } <= names
            outs = [env.submit(call(env, c)) for c in env.entry.walkthrough]
        finally:
            env.close()
        assert all(isinstance(o, Accepted) for o in outs), (task.task_id, outs)
        wins = [accepted(o) for o in outs]
        assert wins[-1].won and wins[-1].done and not any(o.done for o in wins[:-1]), task.task_id


def test_tool_schemas_come_from_the_templates(env: StepEnv) -> None:
    specs = {t.name: t.parameters for t in env.reset().tools}
    assert specs["go"]["properties"]["direction"]["enum"] == ["east", "north", "south", "west"]
    assert specs["go"]["required"] == ["direction"]
    assert specs["take"]["required"] == ["object"] and set(specs["take"]["properties"]) == {"object", "from"}
    assert set(specs["unlock"]["required"]) == {"object", "with"}
    assert specs["look"]["properties"] == {} and specs["look"]["additionalProperties"] is False
    tools = derive_tools(["go east", "take {o}", "take {o} from {c}", "look"])
    assert [t.name for t in tools.values()] == ["go", "take", "look"]
    assert call_for(tools, "take red apple from box") == ("take", {"object": "red apple", "from": "box"})


def test_go_reports_the_exits_and_state_persists(env: StepEnv) -> None:
    exits = [c.split(" ", 1)[1] for c in env.entry.initial_admissible if c.startswith("go ")]
    out = env.submit(ToolCall(name="go", arguments={"direction": "up"}))
    assert isinstance(out, Violation) and out.code == "invalid_action"
    assert out.location == "arguments.direction" and out.observed == "up" and out.allowed == exits
    assert "east" not in out.message and out.raw.startswith("Traceback") and "ValidationError" in out.raw
    moved = env.submit(ToolCall(name="go", arguments={"direction": "East"}))  # normalised
    assert isinstance(moved, Accepted) and "Bedroom" in moved.observation
    out = rejected(env.submit(ToolCall(name="go", arguments={"direction": "east"})))
    assert out.allowed == ["west"]  # the game kept its state


def test_take_reports_the_takeable_objects(env: StepEnv) -> None:
    out = rejected(env.submit(ToolCall(name="take", arguments={"object": "worm"})))
    assert out.code == "invalid_action" and out.allowed == []  # nothing to take in the study
    env.submit(ToolCall(name="go", arguments={"direction": "east"}))
    out = rejected(env.submit(ToolCall(name="take", arguments={"object": "apple"})))
    assert out.location == "arguments.object" and out.allowed == ["worm"]
    won = accepted(env.submit(ToolCall(name="take", arguments={"object": "the Worm"})))
    assert won.won and won.done and "*** The End ***" in won.observation
    assert rejected(env.submit(ToolCall(name="look"))).code == "game_over"


def test_argument_errors(env: StepEnv) -> None:
    out = rejected(env.submit(ToolCall(name="dance", arguments={})))
    assert out.code == "unknown_tool" and out.location == "name" and "go" in out.allowed and "dance" in out.message
    out = rejected(env.submit(ToolCall(name="unlock", arguments={"object": "non-euclidean chest"})))
    assert out.code == "invalid_action" and out.location == "arguments.object" and out.allowed == []  # not locked
    out = rejected(env.submit(ToolCall(name="lock", arguments={"object": "non-euclidean chest"})))
    assert out.code == "missing" and out.location == "arguments.with" and out.allowed == ["non-euclidean latchkey"]
    out = rejected(env.submit(ToolCall(name="lock", arguments={"object": "non-euclidean chest", "with": "worm"})))
    assert out.code == "invalid_action" and out.location == "arguments.with" and out.observed == "worm"
    out = rejected(env.submit(ToolCall(name="open", arguments={"object": 3})))
    assert out.code == "string_type" and out.location == "arguments.object" and out.observed == 3
    out = rejected(env.submit(ToolCall(name="look", arguments={"hard": True})))
    assert out.code == "extra_forbidden" and out.location == "arguments.hard"
    out = rejected(env.submit(ToolCall(name="drop", arguments={"object": "x" * 1000})))
    assert out.code == "string_too_long" and len(out.observed) == 201
    assert rejected(env.submit(TextAnswer(text="go east"))).code == "no_action"
    # none of these touched the game
    assert env.commands == [] and isinstance(env.submit(call(env, "go east")), Accepted)


def test_submit_needs_a_running_game(tasks: list[Task]) -> None:
    env = SUITE.make(tasks[0], STEP, EpisodeContext(budget=4))
    with pytest.raises(RuntimeError):
        env.submit(ToolCall(name="look"))
    env.reset()
    env.close()
    env.close()  # idempotent
    with pytest.raises(RuntimeError):
        env.submit(ToolCall(name="look"))


def test_games_started_at_once_in_worker_threads_all_start(tasks: list[Task]) -> None:
    # the runner resets envs in worker threads; TextWorld's logic parser is process-wide and not
    # thread-safe, and without engine.GAME_LOAD_LOCK these starts broke each other's parse
    from concurrent.futures import ThreadPoolExecutor

    envs = [SUITE.make(task, STEP, EpisodeContext(budget=4)) for task in tasks[:4] * 2]
    try:
        with ThreadPoolExecutor(8) as pool:
            openings = list(pool.map(lambda e: e.reset(), envs))
        assert all(o.tools for o in openings)
    finally:
        for e in envs:
            e.close()
