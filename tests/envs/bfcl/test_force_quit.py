"""`protocol=bfcl`'s verdict on a force-quit, as `bfcl evaluate` gives it (envs.contract.ForceQuits),
and the assistant message resent as the server gave it: through the one loop, on a real entry."""

from __future__ import annotations

import asyncio

import pytest

from conditions import resolve as resolve_condition
from envs.bfcl import data
from envs.bfcl.calls import parse
from envs.contract import EpisodeContext, ToolCall
from harness.loop import run_episode
from harness.types import ModelTurn

pytestmark = pytest.mark.extra("bfcl")


class _Script:
    """A backend that answers from a list of turns and keeps every list of messages it is sent."""

    name = "script"

    def __init__(self, turns: list[ModelTurn]):
        self.turns = turns
        self.sent: list[list[dict]] = []

    async def generate(self, messages, tools, decoding, tool_mode) -> ModelTurn:
        self.sent.append([dict(m) for m in messages])
        return self.turns[len(self.sent) - 1] if len(self.sent) <= len(self.turns) else ModelTurn(text="Done.")


def _env():
    from envs.bfcl.env import BfclEnv
    from envs.bfcl.suite import Base

    suite = Base()
    task = next(t for t in suite.tasks(suite.options_model()) if t.task_id == "base_4")
    return BfclEnv(task, "base", "bfcl")


def _call(c: ToolCall, n: int) -> ModelTurn:
    return ModelTurn(tool_calls=[c.model_copy(update={"id": f"call_{n}"})])


def _play(quit_turn):
    """base_4's ground truth (3 turns of one call), with pwd() until the 21st step of `quit_turn`."""
    env = _env()
    env.reset()
    method = env.functions.__getitem__
    turns: list[ModelTurn] = []
    for t, truth in enumerate(data.entry("base", "multi_turn_base_4")["ground_truth"]):
        turns += [_call(parse(text, method), len(turns)) for text in truth]
        if t == quit_turn:
            turns += [_call(ToolCall(name="pwd"), len(turns)) for _ in range(data.STEP_LIMIT + 1 - len(truth))]
            break
        turns.append(ModelTurn(text="Done."))
    ctx = EpisodeContext(budget=data.most_steps(), condition=resolve_condition("bfcl-native", "message"))
    result = asyncio.run(run_episode(env, _Script(turns), ctx))
    return env, result


def test_a_force_quit_in_the_last_turn_is_judged_and_one_before_it_is_lost():
    env, last = _play(quit_turn=2)
    assert last.force_quit and last.won and not last.lost  # valid in bfcl evaluate: the state is right
    assert env.record_extra()["force_quit_won"] is True and env.verdict["valid"]
    env, first = _play(quit_turn=0)
    assert first.force_quit and first.lost and not first.won
    assert "force_quit_won" not in env.record_extra()
    assert env.verdict["error_type"] == "multi_turn:turns_not_reached"


def test_the_servers_message_goes_back_as_it_came():
    env = _env()
    env.reset()
    served = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c0", "type": "function", "function": {"name": "ls", "arguments": '{"a":true}'}}],
        "refusal": None,
    }
    first = ModelTurn(tool_calls=[ToolCall(name="ls", arguments={"a": True}, id="c0")], message=served)
    closing = {"role": "assistant", "content": "Done.", "tool_calls": []}
    backend = _Script([first, ModelTurn(text="Done.", message=closing)])
    ctx = EpisodeContext(budget=5, condition=resolve_condition("bfcl-native", "message"))
    asyncio.run(run_episode(env, backend, ctx))
    assert backend.sent[1][1] == served and backend.sent[2][1] == served and backend.sent[2][3] == closing
