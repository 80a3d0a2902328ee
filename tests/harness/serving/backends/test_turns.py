"""The one policy that turns a server's answer into a ModelTurn, as both backends apply it.

The OpenAI-compatible backend is fed answers shaped like the `openai` SDK's (attribute objects);
the in-process vLLM backend gets them from a stand-in for `vllm.LLM` (no vLLM here). Both must
come to the same turn for the same answer.
"""

import asyncio
import json
from types import SimpleNamespace

import pytest

from envs.contract import Decoding, ToolSpec
from harness.serving.backends import answers
from harness.serving.backends.openai_compat import OpenAIBackend
from harness.serving.backends.turns import RawCall, native_text_modes, to_turn
from harness.serving.vllm.inproc import VllmInprocBackend
from harness.types import Usage

MOVE = ToolSpec(
    name="move", description="Walk.", parameters={"type": "object", "properties": {"direction": {"type": "string"}}}
)
TAG = '<tool_call>{"name": "move", "arguments": {"direction": "n"}}</tool_call>'
FENCED = '```json\n{"name": "move", "arguments": {"direction": "n"}}\n```'


def _turn(text, native_calls=None, tool_mode="native", text_calls="parse", modes=frozenset(), tools=(MOVE,)):
    return to_turn(
        text,
        native_calls=native_calls,
        usage=Usage(prompt_tokens=11, completion_tokens=7),
        finish_reason="stop",
        latency_s=0.5,
        model_id="m",
        tools=list(tools),
        tool_mode=tool_mode,
        text_calls=text_calls,
        native_text_modes=modes,
    )


def test_structured_calls_are_native_and_one_unreadable_call_spoils_the_turn():
    turn = _turn("", [RawCall("move", '{"direction": "n"}', "c7")])
    assert [(c.name, c.arguments, c.id, c.parse_mode) for c in turn.tool_calls] == [
        ("move", {"direction": "n"}, "c7", "native")
    ]
    assert (turn.usage.prompt_tokens, turn.usage.completion_tokens, turn.finish_reason, turn.model_id) == (
        11,
        7,
        "stop",
        "m",
    )
    bad = _turn("", [RawCall("move", '{"direction": "n"}', "a"), RawCall("move", "[1]", "b")])
    assert bad.tool_calls == [] and "arguments are not valid JSON" in bad.parse_error


def test_prompt_mode_keeps_the_parse_mode_and_the_error():
    assert _turn('{"name": "move", "arguments": {}}', tool_mode="prompt").tool_calls[0].parse_mode == "bare"
    broken = _turn('{"name": "move", "arguments": {', tool_mode="prompt")
    assert broken.tool_calls == [] and "broken JSON" in broken.parse_error


def test_a_family_format_in_the_text_is_native_where_no_server_parser_ran():
    turn = _turn(TAG, modes=native_text_modes("hermes"))
    assert [(c.parse_mode, c.id) for c in turn.tool_calls] == [("native", "call_0")]
    llama = _turn(
        '<|python_tag|>{"name": "move", "parameters": {"direction": "n"}}', modes=native_text_modes("llama3_json")
    )
    assert llama.tool_calls[0].parse_mode == "native"
    # behind a server its parser already ran: a tag left in the text is a call it did not accept
    assert _turn(TAG).tool_calls[0].parse_mode == "text_tag"


@pytest.mark.parametrize("modes", [frozenset(), native_text_modes("hermes")])
def test_text_calls_parse_keeps_them_and_violation_drops_the_turn(modes):
    kept = _turn(FENCED, modes=modes)
    assert kept.tool_calls[0].parse_mode == "text_fenced" and kept.fenced
    strict = _turn(FENCED, modes=modes, text_calls="violation")
    assert (
        strict.tool_calls == []
        and strict.parse_error == "the tool call came back as fenced text, not as a native tool call"
    )


def test_answers_over_the_cap_are_truncated_and_without_tools_nothing_is_parsed():
    turn = _turn("x" * 30_000, tool_mode="prompt")
    assert turn.truncated and len(turn.text) == 20_000
    plain = _turn(FENCED, tools=())
    assert plain.tool_calls == [] and plain.parse_error is None and plain.fenced


def _openai_answer(text, calls=()):
    """A chat completion as a server's body, read by the reader the backend reads it with."""
    message = {
        "role": "assistant",
        "content": text,
        "tool_calls": [{"id": i, "type": "function", "function": {"name": n, "arguments": a}} for i, n, a in calls]
        or None,
    }
    body = {
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7},
        "model": "m",
    }
    return answers.completion(json.dumps(body).encode())


class _OneAnswerLLM:
    """Stands in for vllm.LLM: answers every conversation with `text`."""

    def __init__(self, text):
        self.text = text

    def chat(self, conversations, sampling_params, use_tqdm, tools, chat_template=None):
        out = SimpleNamespace(text=self.text, token_ids=[0] * 7, finish_reason="stop")
        return [SimpleNamespace(prompt_token_ids=[0] * 11, outputs=[out]) for _ in conversations]


def _inproc_turn(text, text_calls):
    backend = VllmInprocBackend("qwen2.5-7b", llm=_OneAnswerLLM(text), sampling_params_cls=dict, text_calls=text_calls)

    async def main():
        try:
            return await backend.generate([{"role": "user", "content": "go"}], [MOVE], Decoding(), "native")
        finally:
            await backend.aclose()

    return asyncio.run(main())


@pytest.mark.parametrize("text_calls", ["parse", "violation"])
def test_both_backends_read_a_text_call_alike(text_calls):
    client = OpenAIBackend("http://127.0.0.1:9/v1", "m", text_calls=text_calls)
    via_server = client._turn(_openai_answer(FENCED), 0.5, [MOVE], "native")
    in_process = _inproc_turn(FENCED, text_calls)
    fields = ("tool_calls", "parse_error", "fenced", "truncated", "usage", "finish_reason")
    assert {f: getattr(via_server, f) for f in fields} == {f: getattr(in_process, f) for f in fields}
    asyncio.run(client.aclose())
