"""The plan protocol on the paper suite: wins, every failure code, the K cap, echo and budget."""

from __future__ import annotations

import json

import pytest

from envs.contract import Accepted, EpisodeContext, Outcome, Task, TextAnswer, ToolCall, Violation
from envs.textworld.options import PaperOptions
from envs.textworld.plan import PlanEnv
from envs.textworld.suite import PaperTextWorld

pytestmark = pytest.mark.slow
SUITE = PaperTextWorld()


@pytest.fixture(scope="module")
def tasks() -> list[Task]:
    return SUITE.tasks(PaperOptions())


def env_for(tasks: list[Task], i: int = 0, budget: int | None = None, **opts) -> PlanEnv:
    env = SUITE.make(tasks[i], PaperOptions(**opts), EpisodeContext(budget=budget or 4))
    assert isinstance(env, PlanEnv)
    return env


def accepted(out: Outcome) -> Accepted:
    assert isinstance(out, Accepted), out
    return out


def rejected(out: Outcome) -> Violation:
    assert isinstance(out, Violation), out
    return out


def plan(*commands) -> TextAnswer:
    return TextAnswer(text=json.dumps({"answer": {"commands": list(commands)}}))


def test_the_walkthrough_wins_every_paper_game(tasks: list[Task]) -> None:
    assert len(tasks) == 50
    for i, task in enumerate(tasks):
        env = env_for(tasks, i)
        opening = env.reset()
        out = env.submit(plan(*env.entry.walkthrough))
        env.close()
        assert isinstance(out, Accepted) and out.won and out.done, (task.task_id, out)
        assert opening.history == "last" and opening.accepts == frozenset({"text"}) and opening.tools == []


def test_opening_carries_the_paper_information(tasks: list[Task]) -> None:
    env = env_for(tasks, 0, budget=6)
    opening = env.reset()
    system, user = opening.messages
    assert system["role"] == "system" and "JSON" in system["content"]
    text = user["content"]
    for part in (
        env.entry.objective,
        env.entry.description,
        env.entry.inventory,
        '{"answer": {"commands": [',
        "at most 4 commands",
        "6 attempts",
    ):
        assert part in text
    # the admissible commands are not shown up front
    assert "lock non-euclidean chest with non-euclidean latchkey" not in text
    assert sum(c in text for c in env.entry.initial_admissible if " " in c) <= 1


def test_invalid_action_reports_the_first_k_admissible_in_game_order(tasks: list[Task]) -> None:
    env = env_for(tasks, 0)
    out = env.submit(plan("go east", "take the worm"))
    assert isinstance(out, Violation) and out.code == "invalid_action"
    assert out.location == "answer.commands[1]" and out.observed == "take the worm"
    assert "take worm" in out.allowed and out.allowed == sorted(out.allowed)  # TextWorld's own (sorted) order
    assert out.message == "command 1 is not admissible"
    assert not any(a in out.message for a in out.allowed)
    assert out.raw.startswith("Traceback (most recent call last)") and "PlanRejected" in out.raw

    first = rejected(env.submit(plan("go north")))
    assert first.location == "answer.commands[0]" and first.allowed == env.entry.initial_admissible[:12]


def test_k_cap(tasks: list[Task]) -> None:
    big = max(range(50), key=lambda i: len(SUITE.entry(tasks[i].params["seed"], PaperOptions()).initial_admissible))
    n = len(SUITE.entry(tasks[big].params["seed"], PaperOptions()).initial_admissible)
    assert n > 3
    for k, expect in ((3, 3), (0, 0), (None, n), (12, min(12, n))):
        out = env_for(tasks, big, k_allowed=k).submit(plan("dance"))
        assert isinstance(out, Violation) and len(out.allowed) == expect
        assert out.allowed == env_for(tasks, big).entry.initial_admissible[:expect]


def test_echo_parameter_reaches_the_opening(tasks: list[Task]) -> None:
    assert env_for(tasks).reset().echo_chars == 240
    assert env_for(tasks, echo_chars=None).reset().echo_chars is None
    assert env_for(tasks, echo_chars=17).reset().echo_chars == 17


def test_failure_codes(tasks: list[Task]) -> None:
    env = env_for(tasks, 0)
    walk = env.entry.walkthrough
    cases = {
        "unparseable_plan": TextAnswer(text="go east, then take worm"),
        "empty_plan": plan(),
        "too_many_commands": plan("look", "look", "look", "look", "look"),
        "invalid_action": plan("fly east"),
        "quest_incomplete": plan(walk[0]),
    }
    for code, answer in cases.items():
        out = env.submit(answer)
        assert isinstance(out, Violation) and out.code == code, (code, out)
        assert out.raw.startswith("Traceback") and out.message
    assert rejected(env.submit(plan(walk[0]))).observed == [walk[0]]
    assert rejected(env.submit(plan(*["look"] * 5))).observed == 5
    assert rejected(env_for(tasks, max_commands=5).submit(plan(*["look"] * 5))).code == "quest_incomplete"


def test_bad_shapes_and_commands_are_violations(tasks: list[Task]) -> None:
    env = env_for(tasks, 0)
    walk = env.entry.walkthrough
    for text in (
        '{"commands": ["go east"]}',
        '{"answer": {"cmds": []}}',
        '{"answer": {"commands": "go east"}}',
        "[1, 2]",
        "[" * 100000,
        '{"answer": "not json"}',
    ):
        out = env.submit(TextAnswer(text=text))
        assert isinstance(out, Violation) and out.code == "unparseable_plan", text[:40]
    out = rejected(env.submit(plan(walk[0], 7)))
    assert out.code == "unparseable_plan" and out.location == "answer.commands[1]" and out.observed == 7
    out = rejected(env.submit(plan(walk[0], "x" * 5000)))
    assert out.code == "invalid_action" and len(out.observed) == 201 and "longer than 200" in out.message
    out = rejected(env.submit(plan("go\x00east")))
    assert out.code == "invalid_action" and "control characters" in out.message
    out = rejected(env.submit(ToolCall(name="go", arguments={"direction": "east"})))
    assert out.code == "unparseable_plan" and "tool call" in out.message
    # whitespace around a command is stripped, as in the paper; an answer-as-JSON-string is read too
    assert accepted(env.submit(plan(f"  {walk[0]}\n", walk[1]))).won
    inner = json.dumps({"commands": walk})
    assert accepted(env.submit(TextAnswer(text=json.dumps({"answer": inner})))).won


def test_fences_fail_unless_stripping_is_on_and_are_always_reported(tasks: list[Task]) -> None:
    walk = env_for(tasks, 0).entry.walkthrough
    fenced = TextAnswer(text="```json\n" + plan(*walk).text + "\n```")
    paper_env = env_for(tasks, 0)
    out = paper_env.submit(fenced)
    assert isinstance(out, Violation) and out.code == "unparseable_plan"
    assert accepted(paper_env.submit(plan(*walk))).won
    assert paper_env.record_extra()["fenced"] == [True, False]
    strip_env = env_for(tasks, 0, fence_strip=True)
    assert accepted(strip_env.submit(fenced)).won
    assert strip_env.record_extra() == {
        "protocol": "plan",
        "action": "plan",
        "game_seed": 20261051,
        "fence_strip": True,
        "fenced_answers": 1,
        "fenced": [True],
    }


def test_each_plan_replays_from_the_start(tasks: list[Task]) -> None:
    env = env_for(tasks, 0)
    walk = env.entry.walkthrough
    assert rejected(env.submit(plan(walk[0]))).code == "quest_incomplete"
    # had the state carried over, the second command alone would be admissible now
    out = rejected(env.submit(plan(walk[1])))
    assert out.code == "invalid_action" and out.location == "answer.commands[0]"
    assert accepted(env.submit(plan(*walk))).won


def test_budget_comes_from_the_episode_context_and_closed_env(tasks: list[Task]) -> None:
    assert "4 attempts" in SUITE.make(tasks[0], PaperOptions(), EpisodeContext(budget=4)).reset().messages[1]["content"]
    assert "9 attempts" in SUITE.make(tasks[0], PaperOptions(), EpisodeContext(budget=9)).reset().messages[1]["content"]
    env = env_for(tasks, 0)
    env.close()
    with pytest.raises(RuntimeError):
        env.submit(plan("look"))
