"""The episode loop on its own: a fake backend and a fake environment, no HTTP, no runner.

Each test pins one rule of `harness.loop` that the runner-level tests cannot isolate: how the
budget counts calls (self-check reviews included, odd budgets, tool-call units), which answer a
review replaces, and that a rejection ends the rest of its turn.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from conditions import resolve as resolve_condition
from envs.contract import (
    Accepted,
    Action,
    Env,
    EpisodeContext,
    Opening,
    Outcome,
    TextAnswer,
    ToolCall,
    ToolSpec,
    Violation,
)
from harness.errors import HarnessError
from harness.loop import run_episode
from harness.types import ModelTurn, Usage

TOOL = ToolSpec(name="move", description="move", parameters={"type": "object", "properties": {}})


def call(target: str) -> ToolCall:
    return ToolCall(name="move", arguments={"to": target}, parse_mode="tag")


def turn(*calls: ToolCall, text: str = "") -> ModelTurn:
    return ModelTurn(text=text, tool_calls=list(calls), usage=Usage(prompt_tokens=10, completion_tokens=2))


class FakeBackend:
    """Answers from a script (the last answer repeats) and keeps every request it got."""

    name = "fake"

    def __init__(self, *answers: ModelTurn | Exception):
        self.answers = list(answers)
        self.requests: list[list[dict[str, Any]]] = []
        self.offered: list[list[str]] = []  # the tools' names offered with each request

    async def generate(self, messages, tools, decoding, tool_mode) -> ModelTurn:
        self.requests.append([dict(m) for m in messages])
        self.offered.append([t.name for t in tools])
        answer = self.answers[min(len(self.requests), len(self.answers)) - 1]
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def model_id(self) -> str | None:
        return "fake-model"

    def for_episode(self, env: Env) -> FakeBackend:
        return self  # as a model backend: one, shared by the episodes

    async def aclose(self) -> None:
        pass


class FakeEnv:
    """Wins when `move` targets `goal`; any other target is an `invalid_action` Violation."""

    blocking = True  # what the loop assumes of an env that does not say: called in a worker thread

    def __init__(
        self,
        goal: str = "east",
        accepts: frozenset = frozenset({"tool"}),
        budget_unit: str = "model_calls",
        history: str = "full",
        **protocol: Any,
    ):
        self.goal, self.accepts, self.budget_unit, self.history = goal, accepts, budget_unit, history
        self.protocol = protocol  # Opening.answer_calls, step_limit
        self.submitted: list[Action] = []

    def reset(self) -> Opening:
        return Opening(
            messages=[{"role": "user", "content": "go somewhere"}],
            tools=[TOOL],
            accepts=self.accepts,
            budget_unit=self.budget_unit,
            history=self.history,
            **self.protocol,
        )

    def submit(self, action: Action) -> Outcome:
        self.submitted.append(action)
        target = action.text.strip() if isinstance(action, TextAnswer) else action.arguments.get("to")
        if target == self.goal:
            return Accepted(observation="you won", done=True, won=True)
        if target == "wall":
            return Accepted(observation="you bump into a wall")
        return Violation(
            code="invalid_action",
            location="arguments.to",
            observed=target,
            allowed=[self.goal],
            message="move: to: not possible here",
        )

    def record_extra(self) -> dict[str, Any]:
        return {}

    def reference(self) -> list[Action]:
        return [call(self.goal)]

    def close(self) -> None:
        pass


def play(env: FakeEnv, backend: FakeBackend, condition: str = "allowed_json", budget: int = 4):
    ctx = EpisodeContext(budget=budget, condition=resolve_condition(condition, "message"))
    return asyncio.run(run_episode(env, backend, ctx))


def test_a_win_stops_the_episode_and_costs_one_call():
    env, backend = FakeEnv(), FakeBackend(turn(call("east")))
    result = play(env, backend)
    assert result.won and result.done and len(backend.requests) == 1 and result.spent == 1
    assert [c.outcome for c in result.calls] == ["won"]


def test_the_budget_counts_model_calls_and_stops_at_it():
    env, backend = FakeEnv(), FakeBackend(turn(call("north")))
    result = play(env, backend, budget=3)
    assert not result.won and len(backend.requests) == 3 and result.spent == 3
    assert [c.outcome for c in result.calls] == ["invalid_action"] * 3


def test_rejection_feedback_is_rendered_by_the_condition():
    env, backend = FakeEnv(), FakeBackend(turn(call("north")), turn(call("east")))
    result = play(env, backend, condition="allowed_json")
    assert result.won
    feedback = backend.requests[1][-1]["content"]
    assert '"allowed"' in feedback and "east" in feedback  # the keyed JSON names the allowed value
    env2, backend2 = FakeEnv(), FakeBackend(turn(call("north")), turn(call("east")))
    play(env2, backend2, condition="loc_obs")
    assert "east" not in backend2.requests[1][-1]["content"]  # loc_obs never shows alternatives


def test_self_check_with_an_odd_budget_never_exceeds_it():
    # budget 3: action + review (2 calls), then one call left: no room for a review, a plain action
    env, backend = FakeEnv(), FakeBackend(turn(call("north")))
    result = play(env, backend, condition="self_check", budget=3)
    assert len(backend.requests) == 3, "a review was asked for with no room left in the budget"
    assert [c.kind for c in result.calls] == ["action", "review", "action"]
    assert result.spent == 3 and len(env.submitted) == 2


def test_self_check_with_an_even_budget_reviews_every_action():
    env, backend = FakeEnv(), FakeBackend(turn(call("north")))
    result = play(env, backend, condition="self_check", budget=4)
    assert [c.kind for c in result.calls] == ["action", "review", "action", "review"]
    assert len(backend.requests) == 4 and len(env.submitted) == 2


def test_a_revision_replaces_the_answer_when_it_holds_a_call():
    env, backend = FakeEnv(), FakeBackend(turn(call("north")), turn(call("east")))
    result = play(env, backend, condition="self_check", budget=2)
    assert result.won and [a.arguments["to"] for a in env.submitted] == ["east"]
    assert backend.requests[1][-1]["content"].startswith("Before your call is executed")


def test_a_revision_as_text_replaces_the_answer_in_an_environment_that_reads_text():
    env = FakeEnv(accepts=frozenset({"text"}), history="last")
    backend = FakeBackend(turn(text="north"), turn(text="east"))
    result = play(env, backend, condition="self_check", budget=2)
    assert [a.text for a in env.submitted] == ["east"], "a text revision must be what the environment gets"
    assert result.won


def test_an_empty_revision_keeps_the_original_answer():
    env, backend = FakeEnv(), FakeBackend(turn(call("east")), turn(text="looks right"))
    result = play(env, backend, condition="self_check", budget=2)
    assert result.won and [a.arguments["to"] for a in env.submitted] == ["east"]


def test_a_rejection_ends_the_rest_of_its_turn():
    env, backend = FakeEnv(), FakeBackend(turn(call("north"), call("east")), turn(call("wall")))
    result = play(env, backend, budget=2)
    assert [a.arguments["to"] for a in env.submitted] == ["north", "wall"], "a call after a rejection was executed"
    assert result.submitted == 2 and not result.won
    replies = backend.requests[1][-2:]
    assert "Not executed" in replies[1]["content"] and "Not executed" not in replies[0]["content"]


def test_a_protocol_that_runs_every_call_runs_those_after_a_rejection():
    env = FakeEnv(answer_calls="all")
    backend = FakeBackend(turn(call("north"), call("wall"), call("south")), turn(call("east")))
    result = play(env, backend, budget=2)
    assert [a.arguments["to"] for a in env.submitted] == ["north", "wall", "south", "east"]
    replies = [m["content"] for m in backend.requests[1][-3:]]
    assert "Not executed" not in " ".join(replies) and replies[1] == "you bump into a wall"
    # the answer's outcome is its first rejection: one failed answer, then the win
    assert [c.outcome for c in result.calls] == ["invalid_action", "won"] and result.submitted == 4


def test_the_protocols_step_limit_force_quits_the_episode_lost():
    env = FakeEnv(accepts=frozenset({"tool", "text"}), step_limit=2)
    backend = FakeBackend(turn(call("wall")))
    result = play(env, backend, budget=10)
    assert result.force_quit and result.lost and result.done and not result.won
    assert len(backend.requests) == 3, "the third answer with calls is the one past a limit of two"
    assert result.transcript[-1]["force_quit"] is True


def test_several_accepted_calls_in_one_turn_all_run():
    env, backend = FakeEnv(), FakeBackend(turn(call("wall"), call("wall"), call("east")))
    result = play(env, backend, budget=1)
    assert result.won and len(env.submitted) == 3 and result.submitted == 3 and result.spent == 1


def test_a_budget_in_tool_calls_runs_only_as_many_calls_as_are_left():
    env = FakeEnv(budget_unit="tool_calls")
    backend = FakeBackend(turn(call("wall"), call("wall"), call("wall")), turn(call("east")))
    result = play(env, backend, budget=2)
    assert len(env.submitted) == 2 and result.spent == 2 and len(backend.requests) == 1
    assert not result.won


def test_a_turn_without_a_call_is_a_no_action_violation_that_costs_a_call():
    env, backend = FakeEnv(), FakeBackend(turn(text="I would go east"), turn(call("east")))
    result = play(env, backend)
    assert result.won and result.spent == 2 and env.submitted[0].arguments["to"] == "east"
    assert isinstance(result.outcomes[0], Violation) and result.outcomes[0].code == "no_action"


def test_a_server_failure_is_a_harness_error_and_stops_the_episode():
    env, backend = FakeEnv(), FakeBackend(turn(call("north")), HarnessError("down", fatal=True))
    result = play(env, backend)
    assert result.harness_error == "down" and result.fatal and len(result.calls) == 1
    assert not result.won


class ThreadNotingEnv(FakeEnv):
    """Notes the thread each of its calls ran in."""

    def __init__(self, blocking: bool | None):
        super().__init__()
        if blocking is not None:
            self.blocking = blocking
        self.threads: list[str] = []

    def reset(self) -> Opening:
        self.threads.append(threading.current_thread().name)
        return super().reset()

    def submit(self, action: Action) -> Outcome:
        self.threads.append(threading.current_thread().name)
        return super().submit(action)


def test_a_blocking_environment_runs_in_a_worker_thread_and_a_cheap_one_on_the_loop():
    main = threading.main_thread().name
    for blocking, on_loop in ((False, True), (True, False), (None, False)):  # an env that does not say: a thread
        env = ThreadNotingEnv(blocking)
        result = play(env, FakeBackend(turn(call("east"))))
        assert result.won and len(env.threads) == 2
        assert all((t == main) == on_loop for t in env.threads), (blocking, env.threads)


def test_word_counts_match_a_full_count_as_messages_are_added_and_changed():
    from harness.loop import WordCounts, prompt_words

    counts = WordCounts()
    messages = [{"role": "system", "content": "one two three"}, {"role": "user", "content": "four"}]
    assert counts(messages) == prompt_words(messages) == 4
    messages.append({"role": "assistant", "content": None, "tool_calls": []})
    messages.append({"role": "tool", "content": "five six"})
    assert counts(messages) == prompt_words(messages) == 6
    messages[1]["content"] = "four and more"  # the same dict, new content
    assert counts(messages) == prompt_words(messages) == 8


def test_the_transcript_holds_each_message_once_and_rebuilds_every_request():
    from harness.loop import full_messages

    for condition, budget in (("allowed_json", 4), ("self_check", 5)):
        backend = FakeBackend(turn(call("north")))  # always rejected: the conversation grows to the budget
        result = play(FakeEnv(), backend, condition, budget=budget)
        turns = result.transcript
        assert full_messages(turns) == backend.requests, condition
        actions = [(t, full) for t, full in zip(turns, full_messages(turns), strict=True) if t["kind"] == "action"]
        # the action turns together hold the last one's conversation once, not every call's again
        assert sum(len(t["messages"]) for t, _ in actions) == len(actions[-1][1]), condition
        assert actions[0][0]["messages_from"] == 0 and all(t["messages_from"] > 0 for t, _ in actions[1:])
        assert len(actions) > 1 and all(len(t["messages"]) <= 2 for t in turns if t["kind"] == "review")


def test_a_history_rebuilt_every_call_is_stored_whole():
    from harness.loop import full_messages

    backend = FakeBackend(turn(text="wall"))
    result = play(FakeEnv(accepts=frozenset({"text"}), history="last"), backend, budget=3)
    assert [t["messages_from"] for t in result.transcript] == [0, 0, 0]
    assert full_messages(result.transcript) == backend.requests


class ReadingEnv(FakeEnv):
    """A protocol that brings its own tool prompt (Opening.tool_prompt="env"): its calls are the
    `to:<target>` words of an answer's text, its results come back in one message of its own."""

    def __init__(self) -> None:
        super().__init__(accepts=frozenset({"tool", "text"}), tool_prompt="env", answer_calls="all")

    def read_calls(self, text: str) -> tuple[list[ToolCall], str | None]:
        calls = [
            ToolCall(name="move", arguments={"to": w[3:]}, parse_mode="to") for w in text.split() if w.startswith("to:")
        ]
        return calls, ("a word it could not read" if "?" in text else None)

    def results_message(self, calls: list[ToolCall], results: list[str]) -> dict[str, Any]:
        return {
            "role": "user",
            "content": " | ".join(f"{c.arguments['to']}: {r}" for c, r in zip(calls, results, strict=True)),
        }


def test_an_env_that_brings_its_tool_prompt_reads_the_calls_and_writes_their_results():
    env, backend = ReadingEnv(), FakeBackend(turn(text="to:wall to:north"), turn(text="to:east"))
    result = play(env, backend, condition="loc_obs")
    assert result.won and backend.offered == [[], []]  # the backend adds no tools prompt of its own
    assert [a.arguments["to"] for a in env.submitted] == ["wall", "north", "east"]  # both calls of the answer ran
    said = backend.requests[1][-1]
    assert said["role"] == "user" and said["content"].startswith("wall: you bump into a wall | north: ")
    assert backend.requests[1][-2] == {"role": "assistant", "content": "to:wall to:north"}
    assert result.calls[0].parse_modes == ["to", "to"] and result.transcript[0]["answer"]["tool_calls"]


def test_calls_a_backend_returned_as_calls_are_not_read_again_from_the_text():
    env, backend = ReadingEnv(), FakeBackend(turn(call("east"), text="to:north"))
    assert play(env, backend).won and [a.arguments["to"] for a in env.submitted] == ["east"]


def test_a_text_the_env_reads_no_call_in_is_an_answer_in_text_with_the_reason_kept():
    env, backend = ReadingEnv(), FakeBackend(turn(text="east?"))
    result = play(env, backend, budget=1)
    assert isinstance(env.submitted[0], TextAnswer) and result.transcript[0]["answer"]["parse_error"]


def test_an_env_that_brings_its_tool_prompt_but_reads_no_calls_is_a_harness_error():
    result = play(FakeEnv(tool_prompt="env"), FakeBackend(turn(text="to:east")))
    assert "reads no calls" in (result.harness_error or "") and not result.calls
