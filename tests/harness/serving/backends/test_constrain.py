"""Constrained decoding (`--constrain`): what each server style is asked, what the answer then
means, its side effects as outcomes, and what is refused at start."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from envs.contract import Decoding, EpisodeContext, ToolSpec
from harness.loop import _actions
from harness.runner import select_tasks
from harness.serving.backends.constrain import enforceable, output_schema, read_answer, request_fields, unenforced
from harness.serving.backends.openai_compat import OpenAIBackend
from harness.spec import build_spec, resolved
from harness.types import ModelTurn
from tests.scripted_server import Reply, ScriptedServer

TOOL = ToolSpec(
    name="book",
    description="Book.",
    parameters={
        "type": "object",
        "additionalProperties": False,
        "required": ["code"],
        "properties": {
            "code": {"type": "string", "pattern": "^[A-Z]{2}\\d{3}$"},
            "adults": {"type": "integer", "minimum": 1},
        },
    },
)


def test_each_style_is_asked_in_its_own_words():
    assert request_fields("none", "openai", [TOOL]) == {}
    assert request_fields("json", "llama.cpp", [TOOL]) == {"response_format": {"type": "json_object"}}
    llama = request_fields("schema", "llama.cpp", [TOOL])["response_format"]
    assert llama["type"] == "json_object" and llama["schema"]["anyOf"][0]["properties"]["name"] == {"const": "book"}
    openai_style = request_fields("schema", "openai", [TOOL])["response_format"]
    assert openai_style["type"] == "json_schema" and openai_style["json_schema"]["strict"] is True
    # native mode: each tool strict under schema; nothing more for json (the server's tool parser)
    native = request_fields("schema", "openai", [TOOL], native_tools=[TOOL.openai()])
    assert native["tools"][0]["function"]["strict"] is True and "response_format" not in native
    assert request_fields("json", "openai", [TOOL], native_tools=[TOOL.openai()]) == {}
    # a message to the user is the schema's other branch
    assert {"required": ["message"]}.items() <= llama["schema"]["anyOf"][-1].items()


def test_what_a_style_cannot_enforce_is_dropped_from_the_request_and_named():
    assert "pattern" not in json.dumps(enforceable(TOOL.parameters, "llama.cpp"))
    assert "pattern" in json.dumps(enforceable(TOOL.parameters, "openai"))
    assert unenforced([TOOL], "llama.cpp") == ["book.adults: minimum", "book.code: pattern"]
    assert unenforced([TOOL], "openai") == []


def test_a_constrained_answer_reads_back_as_a_call_or_a_message():
    assert read_answer('{"name": "book", "arguments": {"code": "AB\n123"}}', {"book"}) == (
        "call",
        ("book", {"code": "AB\n123"}),
    )
    assert read_answer('{"message": "which date?"}', {"book"}) == ("message", "which date?")
    assert read_answer('{"name": "rm", "arguments": {}}', {"book"}) is None
    assert read_answer("[" * 5000, {"book"}) is None


def _generate(server: ScriptedServer, style: str, constrain: str = "schema"):
    async def go():
        backend = OpenAIBackend(server.url, "scripted-model", backoff_s=0.01, constrain_style=style)
        try:
            return await backend.generate(
                [{"role": "user", "content": "hi"}], [TOOL], Decoding(constrain=constrain), "prompt"
            )
        finally:
            await backend.aclose()

    return asyncio.run(go())


@pytest.mark.parametrize("style", ["llama.cpp", "openai"])
def test_the_backend_sends_the_constraint_and_reads_what_comes_back(style):
    answers = iter(
        [Reply(text='{"name": "book", "arguments": {"code": "AB\n123"}}'), Reply(text='{"message": "when?"}')]
    )
    with ScriptedServer(lambda body: next(answers)) as server:
        call = _generate(server, style)
        message = _generate(server, style)
    sent = server.requests[0]["response_format"]
    assert sent["type"] == ("json_object" if style == "llama.cpp" else "json_schema")
    assert call.tool_calls[0].name == "book" and call.tool_calls[0].parse_mode == "constrained"
    assert message.text == "when?" and not message.tool_calls


def test_an_unconstrained_request_carries_no_constraint():
    with ScriptedServer(lambda body: Reply(text="plain")) as server:
        _generate(server, "openai", constrain="none")
    assert "response_format" not in server.requests[0]


def test_a_refusal_and_a_cut_mid_json_are_outcomes_of_their_own():
    from envs.contract import Opening

    opening = Opening(messages=[], tools=[TOOL], accepts=("tool", "text"))
    refused = _actions(ModelTurn(text="", refusal="I can't help with that"), opening, constrained=True)
    cut = _actions(ModelTurn(text='{"name": "book", "argu', finish_reason="length"), opening, constrained=True)
    assert refused.code == "refusal" and cut.code == "cut_at_max_tokens"
    # unconstrained, a cut answer is what it always was: here a text answer to the user
    assert not hasattr(_actions(ModelTurn(text="{", finish_reason="length"), opening), "code")


@pytest.mark.extra("local")
def test_the_llama_grammar_compiles_for_every_suites_tools():
    """llama-cpp-python compiles the schema its server is sent into a grammar; a grammar its own
    parser rejects kills the server (SIGSEGV), so this compiles each in a child process."""
    schemas = {}
    for suite in ("tools-bank", "tools-calendar", "tools-travel", "bank-disputes"):
        spec = build_spec({"suite": suite, "models": ["agent:gold"], "conditions": ["raw"], "tasks": 1})
        plan = resolved(spec)
        env = plan.suite.make(
            select_tasks(plan)[0], plan.options, EpisodeContext(budget=4, condition=plan.conditions["raw"])
        )
        schemas[suite] = output_schema(env.reset().tools, "llama.cpp")
    code = (
        "import json, sys\nfrom llama_cpp.llama_grammar import LlamaGrammar, json_schema_to_gbnf\n"
        "for name, schema in json.load(sys.stdin).items():\n"
        "    LlamaGrammar.from_string(json_schema_to_gbnf(json.dumps(schema)), verbose=False)\n"
        "    print(name)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], input=json.dumps(schemas), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and done.stdout.split() == list(schemas), done.stderr[-2000:]


@pytest.mark.parametrize(
    "args, said",
    [
        (("--model", "agent:gold"), "reference agent, which decodes nothing"),
        (("--model", "local", "--tool-mode", "native"), "does not constrain native tool calls"),
    ],
)
def test_what_cannot_constrain_is_refused_at_start(args, said, tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            "--suite",
            "tools-travel",
            "--conditions",
            "raw",
            "--constrain",
            "none,schema",
            "--out",
            str(tmp_path / "r"),
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and said in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()
