"""The suite's `protocol=bfcl`: BFCL's own rules for an answer's calls (every call runs on the live
backends; a call fails where BFCL's execution fails; 20 steps a turn), against `harness`, where our
contract checks a call before it runs."""

from __future__ import annotations

import asyncio

import pytest

from conditions import resolve as resolve_condition
from envs.bfcl import data
from envs.bfcl.calls import eval_error
from envs.bfcl.judge import UNREADABLE
from envs.bfcl.judge import _written as judge_string
from envs.bfcl.suite import Base
from envs.contract import Accepted, EpisodeContext, ToolCall, Violation
from harness.loop import run_episode
from harness.types import ModelTurn


def _env(protocol: str):
    from envs.bfcl.env import BfclEnv  # imports bfcl_eval: in the tests, so the module collects without it

    suite = Base()
    task = next(t for t in suite.tasks(suite.options_model()) if t.params["entry_id"] == "multi_turn_base_0")
    env = BfclEnv(task, "base", protocol)  # type: ignore[arg-type]
    return env, env.reset()


@pytest.mark.extra("bfcl")
def test_the_step_limit_is_bfcls_own():
    from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT

    assert data.STEP_LIMIT == MAXIMUM_STEP_LIMIT


@pytest.mark.extra("bfcl")
def test_bfcls_protocol_runs_what_our_checks_refuse_and_bfcl_ran():
    # our contract refuses the type; BFCL's backend runs the call, and takes it
    harness, _ = _env("harness")
    bfcl, opening = _env("bfcl")
    assert (opening.answer_calls, opening.step_limit) == ("all", 20)
    call = ToolCall(name="ls", arguments={"a": "yes"})  # a string where the doc says boolean: ls runs
    refused, ran = harness.submit(call), bfcl.submit(call)
    assert isinstance(refused, Violation) and refused.code == "bool_type"
    assert isinstance(ran, Accepted) and "current_directory_content" in ran.observation
    assert bfcl.executed == [[{"name": "ls", "arguments": {"a": "yes"}}]] and harness.executed == [[]]
    assert bfcl.record_extra()["refused_ran"] == 1


@pytest.mark.extra("bfcl")
def test_a_failed_call_is_executed_and_kept_for_bfcls_checker():
    env, _ = _env("bfcl")
    out = env.submit(ToolCall(name="cd", arguments={"folder": "nowhere"}))
    assert isinstance(out, Violation) and out.raw.startswith('{"error": "cd:')
    assert env.executed == [[{"name": "cd", "arguments": {"folder": "nowhere"}}]]


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("ls(a=true)", "name 'true' is not defined"),
        ("cd(folder=document)", "name 'document' is not defined"),
        ("pwd(='')", "invalid syntax (<string>, line 1)"),
        ("ls(a=len)", None),  # a builtin: BFCL's `eval` would compute with it; nothing to tell
    ],
)
def test_bfcls_eval_error_is_told_without_evaluating(text, said):
    assert eval_error(text) == said


@pytest.mark.extra("bfcl")
def test_a_call_text_bfcl_could_not_evaluate_is_answered_with_its_error_and_changes_nothing():
    env, _ = _env("bfcl")
    out = env.submit(ToolCall(name="ls(a=true)", arguments={}))
    assert isinstance(out, Violation) and out.raw == "Error during execution: name 'true' is not defined"
    before = env.backends.instances["GorillaFileSystem"]._current_dir.name
    # kept for BFCL's checker, which its `eval` fails on as on the original (no empty turn)
    assert env.executed == [[{"name": "ls(a=true)", "arguments": {}}]]
    assert judge_string(env.executed[0][0]) == UNREADABLE
    assert env.backends.instances["GorillaFileSystem"]._current_dir.name == before
    blocked = env.submit(ToolCall(name="exit", arguments={}))
    assert (
        isinstance(blocked, Violation) and blocked.raw == "Error during execution: Function call exit is not allowed."
    )


class _Repeats:
    """A player that sends the same two calls forever (a failing one first)."""

    async def generate(self, messages, tools, decoding, tool_mode) -> ModelTurn:
        calls = [ToolCall(name="cd", arguments={"folder": "nowhere"}), ToolCall(name="pwd", arguments={})]
        return ModelTurn(text="", tool_calls=calls)


@pytest.mark.extra("bfcl")
def test_through_the_loop_every_call_runs_and_the_21st_step_force_quits_the_entry():
    env, _ = _env("bfcl")
    ctx = EpisodeContext(budget=100, condition=resolve_condition("bfcl-native", "message"))
    result = asyncio.run(run_episode(env, _Repeats(), ctx))
    assert result.force_quit and result.lost and len(result.calls) == 21
    assert result.submitted == 42 and len(env.executed[0]) == 42  # the pwd after each failed cd ran too


def test_bfcls_execution_rewrites_string_arguments_as_its_regex_does():
    from envs.bfcl.calls import as_bfcl_ran

    instances = {"ls": "m_multi_turn_base_0_GorillaFileSystem_instance"}
    call = ToolCall(name="echo", arguments={"content": "Medium (2 weeks); run ls (a) first", "n": 3})
    ran = as_bfcl_ran(call, instances)
    assert ran is not None
    assert ran.arguments == {
        "content": "Medium(2 weeks); run m_multi_turn_base_0_GorillaFileSystem_instance.ls(a) first",
        "n": 3,
    }
    plain = ToolCall(name="echo", arguments={"content": "no call here"})
    assert as_bfcl_ran(plain, instances) is plain


@pytest.mark.extra("bfcl")
def test_a_string_argument_reaches_the_backend_as_bfcl_wrote_it():
    env, _ = _env("bfcl")
    fs = env.backends.instances["GorillaFileSystem"]
    name = next(iter(fs._current_dir.contents))  # a file or folder of the entry's start
    assert isinstance(env.submit(ToolCall(name="touch", arguments={"file_name": "notes.txt"})), Accepted)
    env.submit(ToolCall(name="echo", arguments={"content": "Effort: Medium (2 weeks)", "file_name": "notes.txt"}))
    shown = env.submit(ToolCall(name="cat", arguments={"file_name": "notes.txt"}))
    assert isinstance(shown, Accepted) and "Medium(2 weeks)" in shown.observation and name
