"""A request under BFCL's reading (Decoding.reading "bfcl", set by `protocol=bfcl`): the body holds
BFCL's runner's keys only, the history as it was handed over (a null content stays null), the tools
as the protocol built them; the answer keeps the server's message and its text is not searched for
calls."""

from __future__ import annotations

import asyncio

from envs.contract import Decoding, ToolSpec
from harness.serving.backends.openai_compat import OpenAIBackend
from tests.scripted_server import Reply, ScriptedServer, call, tagged

WIRE = {"type": "function", "function": {"name": "ls", "description": "List.", "parameters": {}, "response": {}}}
TOOL = ToolSpec(name="ls", description="List.", parameters={}, wire=WIRE)
HISTORY = [
    {"role": "user", "content": "List the files."},
    {"role": "assistant", "content": None, "tool_calls": [call("ls", {})]},
    {"role": "tool", "tool_call_id": "call_0", "content": "[]"},
]


def _ask(reply: Reply, decoding: Decoding):
    with ScriptedServer(lambda body: reply) as server:

        async def go():
            backend = OpenAIBackend(server.url, "scripted-model", max_retries=0)
            try:
                return await backend.generate(HISTORY, [TOOL], decoding, "native")
            finally:
                await backend.aclose()

        turn = asyncio.run(go())
        return server.requests[0], turn


def test_bfcls_request_holds_its_keys_only_and_the_history_as_handed():
    bfcl = Decoding(temperature=0.001, top_p=None, max_tokens=None, tool_choice=None, store=False, reading="bfcl")
    body, turn = _ask(Reply(text=tagged("ls", {})), bfcl)
    assert body == {
        "model": "scripted-model",
        "messages": HISTORY,
        "temperature": 0.001,
        "store": False,
        "tools": [WIRE],
    }
    assert turn.tool_calls == [] and turn.message["content"] == tagged("ls", {})  # a call in text is text
    body, turn = _ask(Reply(text=tagged("ls", {})), Decoding())
    assert body["messages"][1]["content"] == "" and body["tool_choice"] == "auto" and body["max_tokens"] == 512
    assert [c.name for c in turn.tool_calls] == ["ls"] and turn.message is None
