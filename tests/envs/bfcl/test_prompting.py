"""BFCL's prompting handler's messages (envs.bfcl.prompting, envs.bfcl.decode's call text) against
BFCL's own functions: `model_handler.utils` imported where it imports, else its functions read from
the installed release's source and defined beside its constants (it imports tree_sitter, which is
not installed here), so the comparison is always with the code of the release played on."""

from __future__ import annotations

import ast
import asyncio
import copy
import functools
import json
import re
from typing import Any

import pytest

from envs.bfcl import data

pytestmark = pytest.mark.extra("bfcl")

WANTED = {
    "utils.py": ("extract_prompt_format_from_id",),
    "model_handler/utils.py": (
        "system_prompt_pre_processing_chat_model",
        "formulate_system_prompt",
        "parse_prompt_variation_params",
        "format_function_doc",
        "format_execution_results_prompting",
        "default_decode_execute_prompting",
        "ast_parse",
        "resolve_ast_call",
        "resolve_ast_by_type",
        "parse_nested_value",
        "decoded_output_to_execution_list",
    ),
}


@functools.cache
def bfcl() -> dict[str, Any]:
    """BFCL's functions by name."""
    try:
        from bfcl_eval.model_handler import utils

        return {n: getattr(utils, n) for names in WANTED.values() for n in names}
    except ImportError:
        pass
    from bfcl_eval.constants import default_prompts
    from bfcl_eval.constants.enums import ReturnFormat

    space: dict[str, Any] = {"ast": ast, "json": json, "re": re, "ReturnFormat": ReturnFormat, **vars(default_prompts)}
    for rel, names in WANTED.items():
        path = data.package_dir() / rel
        body = [n for n in ast.parse(path.read_text(encoding="utf-8")).body if getattr(n, "name", None) in names]
        assert sorted(n.name for n in body) == sorted(names), f"{path} lacks some of {names}"  # type: ignore[attr-defined]
        exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), space)
    return space


def _docs(entry_id: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[int, list[dict[str, Any]]]]:
    entry = data.entry(entry_id.rsplit("_", 1)[0].removeprefix("multi_turn_"), entry_id)
    start, held = data.functions(entry)
    return entry, start, held


@pytest.mark.parametrize("own_system", [False, True])
def test_the_system_prompt_is_bfcls_with_the_entrys_functions(own_system):
    from envs.bfcl.prompting import with_system_prompt

    entry, docs, held = _docs("multi_turn_miss_func_0")
    first = entry["question"][0]
    if own_system:  # an entry that brings its own system message keeps it after BFCL's
        first = [{"role": "system", "content": "Be brief."}, *first]
    ours = with_system_prompt(first, docs)
    theirs = bfcl()["system_prompt_pre_processing_chat_model"](copy.deepcopy(first), docs, entry["id"])
    assert ours == theirs
    prompt = ours[0]["content"]
    assert ours[0]["role"] == "system" and prompt.startswith("You are an expert in composing functions.")
    assert ("\n\nBe brief." in prompt) == own_system
    # the docs as BFCL's loader gives them: with its hint, and without the functions held back
    listed = json.loads(prompt[prompt.index("[\n") : prompt.rindex("]") + 1])
    assert [d["name"] for d in listed] == [d["name"] for d in docs]
    assert all(d["description"].endswith("Note that the provided function is in Python 3 syntax.") for d in listed)
    assert not {d["name"] for turn in held.values() for d in turn} & {d["name"] for d in listed}


@pytest.mark.parametrize(
    "raw",
    [
        "[cd(folder='document'), ls()]",
        "```\n[cd(folder=document), ls(a=True)]\n```",  # a bare name is its text
        """[f(d={'a': 1, 'b': [1, {'c': "it's"}]}), g(t=(1, 2), n=-3.5)]""",
        "[sum(numbers=[wc(file_name='r', mode='c')])]",  # a call in a list: written as its dict
    ],
)
def test_each_call_is_named_as_bfcls_decoder_writes_it(raw):
    from envs.bfcl.decode import call_text, prompting_calls

    assert [call_text(c) for c in prompting_calls(raw)] == bfcl()["default_decode_execute_prompting"](raw)


def test_a_dict_of_calls_inside_an_argument_is_refused_as_a_nested_call_bfcl_would_execute():
    from envs.bfcl.decode import Undecodable, call_text, prompting_calls

    raw = "[f(d={'x': 1, 'y': {'g': {'a': 1}}})]"
    assert "g(a=1)" in bfcl()["default_decode_execute_prompting"](raw)[0]  # BFCL writes it as a call
    with pytest.raises(Undecodable):
        call_text(prompting_calls(raw)[0])


def test_the_execution_results_come_back_as_bfcls_one_user_message():
    from envs.bfcl.prompting import results_message

    calls, results = ["cd(folder='document')", "ls()"], ['{"current_working_directory": "document"}', "None"]
    theirs = bfcl()["format_execution_results_prompting"]({}, results, {"model_responses_decoded": calls})
    assert results_message(calls, results) == {"role": "user", "content": theirs}
    assert ast.literal_eval(theirs)[1] == {"role": "tool", "name": "ls()", "content": "None"}


def test_a_holdout_turn_lists_the_held_back_docs_as_bfcl_holds_them():
    from bfcl_eval.constants.default_prompts import DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC as FC

    from envs.bfcl.prompting import more_functions

    entry, _, held = _docs("multi_turn_miss_func_0")
    (_, docs), *_ = held.items()
    listed, sentence = more_functions(docs).rsplit("\n", 1)
    # BFCL adds the hint after taking the held-back docs out: theirs are the doc file's lines as they are
    files = [
        data.package_dir() / "data" / "multi_turn_func_doc" / f"{data.CLASSES[c]}.json"
        for c in entry["involved_classes"]
    ]
    raw = {d["name"]: d for f in files for d in map(json.loads, f.read_text(encoding="utf-8").splitlines())}
    assert sentence == FC and ast.literal_eval(listed) == [raw[d["name"]] for d in docs]
    assert listed == str([raw[d["name"]] for d in docs])  # written with `str`, keys in the file's order


def _make(entry_id: str, protocol: str, tool_mode: str):
    from conditions import resolve as resolve_condition
    from envs.bfcl.suite import Base, MissFunc
    from envs.contract import EpisodeContext

    suite = MissFunc() if "miss_func" in entry_id else Base()
    options = suite.options_model(protocol=protocol)
    task = next(t for t in suite.tasks(options) if t.params["entry_id"] == entry_id)
    ctx = EpisodeContext(budget=6, tool_mode=tool_mode, condition=resolve_condition("bfcl-native", "message"))  # type: ignore[arg-type]
    return suite.make(task, options, ctx), ctx


def _bfcl_ran(entry: dict[str, Any], calls: list[str]) -> list[str]:
    """What BFCL's own execution answers each call of a step (its instances dropped after)."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils as utils

    name = "repair_harness_test_prompting"
    try:
        results, _ = utils.execute_multi_turn_func_call(
            calls, entry["initial_config"], entry["involved_classes"], name, entry["id"]
        )
    finally:
        for key in [k for k in vars(utils) if k.startswith(name)]:
            del vars(utils)[key]
    return list(results)


def test_a_served_model_plays_bfcls_prompting_conversation():
    from harness.loop import run_episode
    from harness.serving.backends.openai_compat import OpenAIBackend
    from tests.scripted_server import Reply, ScriptedServer

    answers = iter(["[cd(folder='document'), ls()]", "I have looked at the folder."])
    env, ctx = _make("multi_turn_base_0", "bfcl", "prompt")
    with ScriptedServer(lambda body: Reply(text=next(answers, "Done."))) as server:

        async def play():
            backend = OpenAIBackend(server.url, "scripted-model", max_retries=0)
            try:
                return await run_episode(env, backend, ctx)
            finally:
                await backend.aclose()

        result = asyncio.run(play())
    assert result.harness_error is None
    first, second = server.requests[0], server.requests[1]
    entry = data.entry("base", "multi_turn_base_0")
    docs, _ = data.functions(entry)
    theirs = bfcl()["system_prompt_pre_processing_chat_model"](copy.deepcopy(entry["question"][0]), docs, entry["id"])
    # BFCL's system prompt with the entry's functions, and neither our tools block nor native tools
    assert first["messages"] == theirs and "tools" not in first and "<tool_call>" not in json.dumps(first)
    # both calls of the answer ran, as BFCL decoded them
    assert env.executed[0] == [{"name": "cd", "arguments": {"folder": "document"}}, {"name": "ls", "arguments": {}}]
    decoded = ["cd(folder='document')", "ls()"]
    results = bfcl()["format_execution_results_prompting"](
        {}, _bfcl_ran(entry, decoded), {"model_responses_decoded": decoded}
    )
    assert second["messages"][-2:] == [
        {"role": "assistant", "content": "[cd(folder='document'), ls()]"},
        {"role": "user", "content": results},  # BFCL's one message of the step's results
    ]
    assert "final_report.pdf" in results
    # the answer in text ended the turn: the next question came as the user's message
    assert server.requests[2]["messages"][-1] == {"role": "user", "content": entry["question"][1][0]["content"]}
    assert env.record_extra()["tool_prompt"] == "bfcl" and result.calls[0].parse_modes == ["bfcl", "bfcl"]


def test_a_holdout_turn_in_prompt_mode_lists_the_functions_added():
    from envs.bfcl.prompting import more_functions
    from envs.contract import TextAnswer

    env, _ = _make("multi_turn_miss_func_0", "bfcl", "prompt")
    env.reset()
    turn, docs = next(iter(env.held.items()))
    said = [env.submit(TextAnswer(text="no")).observation for _ in range(turn)][-1]
    assert said == more_functions(docs) and f"'name': '{docs[0]['name']}'" in said


def test_what_bfcls_decoder_fails_on_ends_the_turn_and_what_it_would_compute_is_not_run():
    env, _ = _make("multi_turn_base_0", "bfcl", "prompt")
    env.reset()
    assert env.read_calls("I moved the file.") == ([], None)  # BFCL's decoder fails: an answer in text
    calls, error = env.read_calls("[ls(a=1 + 2)]")
    assert calls == [] and "would evaluate" in (error or "") and env.record_extra()["not_evaluated"] == 1
    calls, error = env.read_calls("```\n[cd(folder='document'), ls()]```")
    assert error is None and [(c.name, c.id, c.parse_mode) for c in calls] == [
        ("cd", "call_0", "bfcl"),
        ("ls", "call_1", "bfcl"),
    ]


@pytest.mark.parametrize(("protocol", "tool_mode"), [("bfcl", "native"), ("harness", "prompt")])
def test_outside_bfcls_protocol_in_prompt_mode_the_conversation_is_ours(protocol, tool_mode):
    env, _ = _make("multi_turn_base_0", protocol, tool_mode)
    opening = env.reset()
    assert (
        opening.tool_prompt == "backend" and opening.messages == data.entry("base", "multi_turn_base_0")["question"][0]
    )
    assert "tool_prompt" not in env.record_extra()


@pytest.mark.parametrize("entry_id", [f"multi_turn_{c}_{i}" for c in ("base", "miss_func") for i in range(0, 200, 9)])
def test_gold_wins_in_prompt_mode_its_calls_named_as_bfcl_writes_them(entry_id):
    from harness.agents import get_agent
    from harness.loop import run_episode

    env, ctx = _make(entry_id, "bfcl", "prompt")
    ctx = type(ctx)(budget=100, tool_mode=ctx.tool_mode, condition=ctx.condition)
    result = asyncio.run(run_episode(env, get_agent("agent:gold").for_episode(env), ctx))
    assert result.harness_error is None and result.won, env.verdict
    sent = [m for t in result.transcript for m in t["messages"] if str(m["content"]).startswith("[{'role': 'tool'")]
    assert sent and all(ast.literal_eval(m["content"])[0]["name"].endswith(")") for m in sent)
