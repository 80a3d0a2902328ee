"""`protocol=bfcl`'s requests as BFCL's runner builds them (envs.bfcl.wire): the tool list against
BFCL's own `convert_to_tool` (its text, read from the installed release: its module imports
tree_sitter, which is not installed here), its sampling defaults, its reading of an answer. The
whole requests against BFCL's runner itself: tests/bfcl_live_compare.py."""

from __future__ import annotations

import ast
import copy
import json
import re

import pytest

from envs.bfcl import data
from harness.serving.backends.turns import RawCall, to_turn
from harness.types import Usage

pytestmark = pytest.mark.extra("bfcl")


def _convert_to_tool():
    from bfcl_eval.constants.enums import ModelStyle
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    path = data.package_dir() / "model_handler" / "utils.py"
    names = {"_cast_to_openai_type", "convert_to_tool"}
    body = [n for n in ast.parse(path.read_text(encoding="utf-8")).body if getattr(n, "name", None) in names]
    space = {"copy": copy, "re": re, "json": json, "ModelStyle": ModelStyle, "GORILLA_TO_OPENAPI": GORILLA_TO_OPENAPI}
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), space)
    return lambda docs: space["convert_to_tool"](docs, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)


def test_every_functions_tool_is_bfcls_own():
    from envs.bfcl.wire import tool

    theirs = _convert_to_tool()
    docs = [d for cls in data.CLASSES for d in data.docs(cls)]
    assert [tool(d).openai() for d in docs] == theirs(docs)
    assert any("response" in t["function"] for t in theirs(docs))  # the schema BFCL keeps


def test_a_miss_func_turn_sends_the_functions_back_without_the_hint():
    from envs.bfcl.env import BfclEnv
    from envs.bfcl.suite import MissFunc

    suite = MissFunc()
    task = next(t for t in suite.tasks(suite.options_model()) if t.task_id == "miss_func_4")
    env = BfclEnv(task, "miss_func", "bfcl")
    opening = env.reset()
    entry = data.entry("miss_func", "multi_turn_miss_func_4")
    start, held = data.functions(entry)
    assert [t.openai() for t in opening.tools] == _convert_to_tool()(start)
    turn = min(held)
    tools = None
    from envs.contract import TextAnswer

    for _ in range(turn):
        tools = env.submit(TextAnswer(text="Done.")).tools
    assert [t.openai() for t in tools] == _convert_to_tool()([*start, *(data.unhinted(d) for d in held[turn])])
    env.close()


def test_the_requests_keys_are_bfcls():
    from envs.bfcl.wire import decoding
    from envs.contract import Decoding

    d = decoding(Decoding(temperature=data.TEMPERATURE, top_p=None, max_tokens=None, seed=3))
    assert (d.tool_choice, d.store, d.seed, d.reading, d.max_tokens) == (None, False, None, "bfcl", None)
    main = (data.package_dir() / "__main__.py").read_text(encoding="utf-8")
    assert f'{data.TEMPERATURE}, help="The temperature parameter' in main.replace("\n", "").replace("  ", "")


def _turn(reading, text="", calls=None):
    tools = [__import__("envs.contract", fromlist=["ToolSpec"]).ToolSpec(name="ls", description="", parameters={})]
    return to_turn(
        text,
        native_calls=calls,
        usage=Usage(),
        finish_reason="stop",
        latency_s=0.0,
        model_id=None,
        tools=tools,
        tool_mode="native",
        text_calls="parse",
        reading=reading,
    )


def test_arguments_that_do_not_decode_end_bfcls_turn_and_a_call_in_text_is_text():
    empty = [RawCall("ls", "")]
    assert _turn("harness", calls=empty).tool_calls[0].arguments == {}
    bfcl = _turn("bfcl", calls=empty)
    assert bfcl.tool_calls == [] and "not valid JSON" in bfcl.parse_error
    text = '<tool_call>{"name": "ls", "arguments": {}}</tool_call>'
    assert _turn("harness", text).tool_calls and _turn("bfcl", text).tool_calls == []
