"""BFCL's multi-turn suites: gold wins every entry by BFCL's own checker, calls are checked against
the docs before they run, backend errors become Violations with BFCL's text, the tool list grows at
a miss_func holdout turn, and model text never reaches the checker as code."""

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conditions import resolve as resolve_condition
from envs.bfcl import data
from envs.bfcl.calls import NotACall, call_string, parse
from envs.bfcl.judge import judge
from envs.bfcl.suite import Base, LongContext, MissFunc, MissParam
from envs.contract import Accepted, EpisodeContext, TextAnswer, ToolCall, Violation
from harness.agents import get_agent
from harness.loop import run_episode

SUITES = (Base, MissParam, MissFunc, LongContext)


def _env(suite, entry_id):
    from envs.bfcl.env import BfclEnv  # imports bfcl_eval: in the tests, so the module collects without it

    s = suite()
    task = next(t for t in s.tasks(s.options_model()) if t.params["entry_id"] == entry_id)
    env = BfclEnv(task, s.category)
    env.reset()
    return env


def _play(env, actions):
    out = None
    for a in actions:
        out = env.submit(a)
    return out


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.name)
@pytest.mark.extra("bfcl")
def test_gold_wins_every_entry_by_bfcls_checker_and_is_never_rejected(suite):
    from envs.bfcl.env import BfclEnv

    s = suite()
    tasks = s.tasks(s.options_model())
    assert len(tasks) == 200
    for task in tasks:
        env = BfclEnv(task, s.category)
        env.reset()
        outcomes = [env.submit(a) for a in env.reference()]
        assert not [o for o in outcomes if isinstance(o, Violation)], task.task_id
        assert outcomes[-1].done and outcomes[-1].won, (task.task_id, env.verdict)


@pytest.mark.extra("bfcl")
def test_a_second_check_of_the_same_entry_is_not_fooled_by_the_first_ones_instances():
    env = _env(Base, "multi_turn_base_0")
    gold = env.reference()
    _play(env, gold)
    wrong = [[] for _ in env.executed]  # nothing executed: lost
    assert judge(env.entry, env.executed)["valid"] and not judge(env.entry, wrong)["valid"]
    assert judge(env.entry, env.executed)["valid"]  # and gold again after a failure
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    assert not [k for k in vars(multi_turn_utils) if k.startswith("repair_harness_")]  # instances dropped


@pytest.mark.extra("bfcl")
def test_fewer_turns_than_the_entry_has_is_a_failure():
    env = _env(Base, "multi_turn_base_0")
    assert judge(env.entry, [[]])["error_type"] == "multi_turn:turns_not_reached"


@pytest.mark.extra("bfcl")
def test_positional_ground_truth_arguments_are_named_by_the_backends_signature_not_the_docs_order():
    from envs.bfcl.backends import Backends

    travel = Backends(["TravelAPI"], {}, long_context=False)
    call = parse("purchase_insurance('tok', 'comprehensive', 'b1', 50.0, 'card')", travel.method)
    import inspect

    names = [p for p in inspect.signature(travel.method("purchase_insurance")).parameters][:5]
    assert list(call.arguments) == names and call.arguments[names[3]] == 50.0
    doc_order = list(
        next(d for d in data.docs("TravelAPI") if d["name"] == "purchase_insurance")["parameters"]["properties"]
    )
    assert doc_order != names  # the trap the signature avoids


@pytest.mark.parametrize(
    "call, code, location",
    [
        (ToolCall(name="rm_rf", arguments={}), "unknown_tool", "name"),
        (
            ToolCall(name="cd", arguments={"folder": "x", "force": True}),
            "unexpected_keyword_argument",
            "arguments.force",
        ),
        (ToolCall(name="cd", arguments={}), "missing", "arguments.folder"),
        (ToolCall(name="cd", arguments={"folder": 3}), "string_type", "arguments.folder"),
    ],
)
@pytest.mark.extra("bfcl")
def test_a_call_that_breaks_its_doc_is_rejected_before_it_runs(call, code, location):
    env = _env(Base, "multi_turn_base_0")
    out = env.submit(call)
    assert isinstance(out, Violation) and (out.code, out.location) == (code, location)
    assert env.executed == [[]]  # not executed: the checker never sees it


@pytest.mark.extra("bfcl")
def test_an_enum_stated_only_in_a_description_is_checked_and_listed():
    entry_id = next(
        i for i in data.entry_ids("base") if "VehicleControlAPI" in data.entry("base", i)["involved_classes"]
    )
    env = _env(Base, entry_id)
    out = env.submit(ToolCall(name="setHeadlights", arguments={"mode": "bright"}))
    assert isinstance(out, Violation) and out.code == "enum" and out.allowed == ["on", "off", "auto"]
    assert isinstance(env.submit(ToolCall(name="setHeadlights", arguments={"mode": "on"})), Accepted)


@pytest.mark.extra("bfcl")
def test_a_string_ticket_id_is_accepted_where_bfcls_ground_truth_passes_one():
    from envs.bfcl.checks import ground_truth_passes

    assert "string" in ground_truth_passes()[("close_ticket", "ticket_id")]


@pytest.mark.extra("bfcl")
def test_a_backend_error_is_a_violation_with_bfcls_own_text_the_quoted_argument_and_live_values():
    env = _env(Base, "multi_turn_base_0")
    out = env.submit(ToolCall(name="cd", arguments={"folder": "documnet"}))
    assert isinstance(out, Violation) and out.code == "backend_error"
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils as bfcl

    shown, _ = bfcl.execute_multi_turn_func_call(
        ["cd(folder='documnet')"],
        env.entry["initial_config"],
        env.entry["involved_classes"],
        "test_raw",
        env.entry["id"],
    )
    for k in [k for k in vars(bfcl) if k.startswith("test_raw")]:
        del vars(bfcl)[k]
    assert out.raw == shown[0]  # exactly what BFCL shows a model
    assert out.message == out.raw and out.location == "arguments.folder" and out.observed == "documnet"
    fs = env.backends.instances["GorillaFileSystem"]
    assert out.allowed and set(out.allowed) <= set(fs._current_dir.contents) | {".."}
    assert env.executed == [[{"name": "cd", "arguments": {"folder": "documnet"}}]]  # executed: the checker replays it


@pytest.mark.extra("bfcl")
def test_an_exception_reads_as_bfcl_shows_it_and_no_credential_is_ever_listed():
    entry_id = next(i for i in data.entry_ids("base") if "TwitterAPI" in data.entry("base", i)["involved_classes"])
    env = _env(Base, entry_id)
    out = env.submit(ToolCall(name="authenticate_twitter", arguments={"username": "x", "password": "y"}))
    password = env.entry["initial_config"]["TwitterAPI"].get("password")
    seen = str(out.model_dump()) if isinstance(out, Violation) else out.observation
    assert password and password not in seen


@pytest.mark.extra("bfcl")
def test_miss_func_adds_the_held_back_functions_at_their_turn_through_the_loop():
    from envs.bfcl.env import MORE_FUNCTIONS, BfclEnv

    env = _env(MissFunc, "multi_turn_miss_func_0")
    held = {t: [d["name"] for d in docs] for t, docs in env.held.items()}
    assert held == {3: ["sort"]}

    class Recording:
        def __init__(self, agent):
            self.agent, self.tools = agent, []

        async def generate(self, messages, tools, decoding, tool_mode):
            self.tools.append({t.name for t in tools})
            return await self.agent.generate(messages, tools, decoding, tool_mode)

    env = BfclEnv(env.task, "miss_func")
    backend = Recording(get_agent("agent:gold").for_episode(env))
    ctx = EpisodeContext(budget=40, condition=resolve_condition("raw", "message"))
    result = asyncio.run(run_episode(env, backend, ctx))
    assert result.won, env.verdict
    assert "sort" not in backend.tools[0] and "sort" in backend.tools[-1]
    asked = [m["content"] for turn in result.transcript for m in turn["messages"] if m["role"] == "user"]
    assert MORE_FUNCTIONS in asked and env.entry["question"][1][0]["content"] in asked


@pytest.mark.extra("bfcl")
def test_model_text_never_reaches_the_checker_as_code(tmp_path):
    marker = tmp_path / "pwned"
    attack = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    env = _env(Base, "multi_turn_base_0")
    assert isinstance(env.submit(ToolCall(name=attack, arguments={})), Violation)
    assert isinstance(env.submit(ToolCall(name="cd", arguments={f"folder={attack}": "x"})), Violation)
    env.submit(ToolCall(name="cd", arguments={"folder": f"') or {attack} or ('"}))  # runs as a plain string
    for _ in env.entry["question"]:
        env.submit(TextAnswer(text="done"))
    assert env.verdict is not None and not marker.exists()
    with pytest.raises(NotACall):
        call_string(ToolCall(name="cd", arguments={"a); import os; (b": 1}))


def test_a_missing_package_names_the_install_command_and_exits_2(tmp_path):
    hide = (
        "import sys; sys.modules['bfcl_eval'] = None; from harness.cli import app; "
        "app(sys.argv[1:], prog_name='repair-harness')"
    )
    root = Path(__file__).resolve().parents[3]
    env = {**os.environ, "PYTHONPATH": str(root)}
    for args in (
        ["suites", "bfcl-base"],
        ["run", "--suite", "bfcl-base", "--model", "agent:gold", "--conditions", "raw", "--out", str(tmp_path / "r")],
    ):
        p = subprocess.run([sys.executable, "-c", hide, *args], capture_output=True, text=True, env=env, cwd=tmp_path)
        text = " ".join((p.stdout + p.stderr).split())
        assert p.returncode == 2 and "bfcl-eval==" in text and "--no-deps" in text and "Traceback" not in text, text
    p = subprocess.run([sys.executable, "-c", hide, "suites"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert p.returncode == 0 and "bfcl-base" in p.stdout and "tools-bank" in p.stdout


@pytest.mark.extra("bfcl")
def test_an_error_quoting_two_arguments_is_located_at_the_one_the_live_state_lacks():
    env = _env(Base, "multi_turn_base_0")
    assert isinstance(env.submit(ToolCall(name="cd", arguments={"folder": "document"})), Accepted)
    out = env.submit(
        ToolCall(name="diff", arguments={"file_name1": "final_report.pdf", "file_name2": "previuos_report.pdf"})
    )
    assert isinstance(out, Violation) and out.location == "arguments.file_name2"
    assert "previous_report.pdf" in out.allowed and "previuos_report.pdf" not in out.allowed


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (ToolCall(name="nope", arguments={}), "Error during execution: name 'nope' is not defined"),
        (
            ToolCall(name="cd", arguments={"folder": "document", "deep": True}),
            "Error during execution: GorillaFileSystem.cd() got an unexpected keyword argument 'deep'",
        ),
        (ToolCall(name="cat<|channel|>", arguments={}), "Error during execution: invalid syntax"),
    ],
)
@pytest.mark.extra("bfcl")
def test_a_call_our_checks_refuse_carries_as_raw_what_bfcls_own_execution_would_have_said(call, said):
    env = _env(Base, "multi_turn_base_0")
    before = env.backends.instances["GorillaFileSystem"]._current_dir.name
    out = env.submit(call)
    assert isinstance(out, Violation) and out.raw.startswith(said)
    assert env.executed == [[]] and env.backends.instances["GorillaFileSystem"]._current_dir.name == before


@pytest.mark.extra("bfcl")
def test_a_backend_methods_mutable_default_is_never_shared_between_episodes_or_checks():
    """`post_tweet(mentions=[])` then `mention` extends the tweet's list, which is the default
    itself: left alone, every later tweet (and BFCL's checker's replays) would carry the mention."""
    first = _env(Base, "multi_turn_base_0")
    first.backends.instances["TwitterAPI"].authenticated = True
    tweet = first.submit(ToolCall(name="post_tweet", arguments={"content": "a"}))
    assert isinstance(tweet, Accepted)
    assert isinstance(
        first.submit(ToolCall(name="mention", arguments={"tweet_id": 3, "mentioned_usernames": ["@x"]})), Accepted
    )
    second = _env(Base, "multi_turn_base_0")
    second.backends.instances["TwitterAPI"].authenticated = True
    out = second.submit(ToolCall(name="post_tweet", arguments={"content": "b"}))
    assert '"mentions": []' in out.observation
    gold = second.reference()
    verdicts = {
        bool(judge(second.entry, [[c.model_dump(include={"name", "arguments"})] for c in gold[:1]])["valid"])
        for _ in range(2)
    }
    assert len(verdicts) == 1  # the same check twice: the same verdict


@pytest.mark.extra("bfcl")
def test_each_turn_is_judged_as_it_ends_and_a_fork_knows_the_turn_it_is_in():
    env = _env(Base, "multi_turn_base_0")
    gold = env.reference()
    first_turn = gold[: gold.index(next(a for a in gold if isinstance(a, TextAnswer))) + 1]
    assert env.segment() == 0
    _play(env, first_turn)
    assert env.segment() == 1 and env.record_extra()["segments_solved"] == [True]
    env.submit(TextAnswer(text="skipped the second turn"))
    assert env.record_extra()["segments_solved"] == [True, False]
