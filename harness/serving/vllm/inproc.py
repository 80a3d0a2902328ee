"""In-process vLLM (`vllm.LLM.chat`) for offline batch runs (one GPU, or the CPU build), behind the Backend interface.

Concurrent `generate` calls (the runner's episodes) are gathered for a short window and sent to
`LLM.chat` as one batch, which is where vLLM's throughput comes from. `LLM.chat` applies the
model's chat template (with the tools, in native mode) but runs no tool parser, so every call is
read from the text by `harness.serving.backends.turns.to_turn`, the policy every backend shares: a call
written in the format the model family's vLLM tool parser would have accepted counts as
`native`; any other format is a call that came back as text.

vLLM is imported only when this backend is constructed; without it that raises MissingExtra.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from envs.contract import Decoding, ToolSpec
from harness.errors import HarnessError
from harness.serving.backends.base import ToolMode
from harness.serving.backends.prompt_tools import with_tools_prompt
from harness.serving.backends.turns import native_text_modes, to_turn
from harness.serving.server_proc import MissingExtra
from harness.serving.vllm.presets import EXTRA_HINT, prepare, preset_row
from harness.serving.vllm.rows import VllmPreset
from harness.types import ModelTurn, Usage


def import_vllm() -> Any:
    try:
        return importlib.import_module("vllm")
    except ImportError as exc:
        raise MissingExtra(
            f"the in-process vLLM backend needs vLLM, which is not installed ({exc}); install the extra: {EXTRA_HINT}"
        ) from exc


def chat_messages(messages: list[dict[str, Any]], tools: list[ToolSpec], tool_mode: ToolMode) -> list[dict[str, Any]]:
    """What `LLM.chat` gets: prompt mode describes the tools itself; content null becomes ""."""
    if tools and tool_mode == "prompt":
        messages = with_tools_prompt(messages, tools)
    out = []
    for m in messages:
        m = {**m, "content": m.get("content") or ""}
        if m.get("tool_calls"):
            # chat templates iterate the arguments as a mapping; the OpenAI wire form is a string
            m["tool_calls"] = [_args_as_dict(c) for c in m["tool_calls"]]
        out.append(m)
    return out


def _args_as_dict(call: dict[str, Any]) -> dict[str, Any]:
    fn = dict(call.get("function", {}))
    if isinstance(fn.get("arguments"), str):
        try:
            fn["arguments"] = json.loads(fn["arguments"] or "{}")
        except ValueError:
            pass
    return {**call, "function": fn}


@dataclass
class _Request:
    conversation: list[dict[str, Any]]
    tools: list[ToolSpec]
    tool_mode: ToolMode
    decoding: Decoding
    future: asyncio.Future = field(repr=False)

    def group(self) -> str:
        # one LLM.chat call takes one tool list: group requests by what the template will see
        native = self.tools if self.tool_mode == "native" else []
        return json.dumps([t.openai() for t in native], sort_keys=True)


class VllmInprocBackend:
    """`generate` queues the request; a worker sends batches of up to `max_batch` to `LLM.chat`.

    preset: a row, a preset name or HF id, `local`, or an org/name id (which then needs
    tool_parser, unless native_tools is off: the parser decides what is native).
    llm: an already built `vllm.LLM`-like object (tests pass a double); by default one is built
    from the preset with the paper's settings (max model len, quantization, vLLM's generation
    config) and the row's engine arguments. `llm_kwargs` go to `vllm.LLM` (e.g.
    gpu_memory_utilization).
    """

    name = "vllm-inproc"

    def __init__(
        self,
        preset: str | VllmPreset,
        *,
        tool_parser: str | None = None,
        text_calls: str = "parse",
        max_batch: int = 256,
        batch_window_s: float = 0.05,
        llm: Any = None,
        sampling_params_cls: Any = None,
        native_tools: bool = True,
        **llm_kwargs: Any,
    ):
        self.preset = preset_row(preset, tool_parser=tool_parser, native_tools=native_tools)
        if not native_tools:  # prompt mode: the model's own template, no tool template needed
            self.preset = self.preset.model_copy(update={"chat_template": None})
        self.text_calls, self.max_batch, self.batch_window_s = text_calls, max_batch, batch_window_s
        self.native_modes = native_text_modes(self.preset.tool_parser)
        self._template: str | None = None
        if llm is None:
            vllm = import_vllm()
            self.preset = prepare(self.preset)
            for key, value in self.preset.env.items():
                os.environ.setdefault(key, value)
            llm = vllm.LLM(
                model=self.preset.weights or self.preset.hf_id,
                **{**self.preset.engine_args(), **llm_kwargs},
            )
            sampling_params_cls = vllm.SamplingParams
            if self.preset.chat_template:  # what `vllm serve --chat-template` would render with
                self._template = Path(self.preset.chat_template).read_text()
        self._llm, self._sampling_cls = llm, sampling_params_cls
        self._queue: asyncio.Queue[_Request] | None = None
        self._worker: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def for_episode(self, env: Any) -> VllmInprocBackend:
        """A model plays every episode as it is: the env is never shown to it."""
        return self

    async def model_id(self) -> str | None:
        return self.preset.hf_id

    def sampling_params(self, d: Decoding) -> Any:
        # special tokens stay in the text: Llama's <|python_tag|> and Mistral's [TOOL_CALLS] mark calls
        return self._sampling_cls(
            temperature=d.temperature,
            top_p=1.0 if d.top_p is None else d.top_p,
            max_tokens=d.max_tokens,
            seed=d.seed,
            skip_special_tokens=False,
        )

    async def generate(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], decoding: Decoding, tool_mode: ToolMode
    ) -> ModelTurn:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:  # a new event loop (a second asyncio.run): a new worker
            self._loop, self._queue = loop, asyncio.Queue()
            self._worker = loop.create_task(self._work())
        req = _Request(chat_messages(messages, tools, tool_mode), tools, tool_mode, decoding, loop.create_future())
        assert self._queue is not None
        await self._queue.put(req)
        return await req.future

    async def _work(self) -> None:
        assert self._queue is not None and self._loop is not None
        while True:
            batch = [await self._queue.get()]
            deadline = self._loop.time() + self.batch_window_s
            while len(batch) < self.max_batch and (left := deadline - self._loop.time()) > 0:
                try:
                    batch.append(await asyncio.wait_for(self._queue.get(), left))
                except TimeoutError:
                    break
            groups: dict[str, list[_Request]] = defaultdict(list)
            for r in batch:
                groups[r.group()].append(r)
            for reqs in groups.values():
                await self._run(reqs)

    async def _run(self, reqs: list[_Request]) -> None:
        native_tools = [t.openai() for t in reqs[0].tools] if reqs[0].tool_mode == "native" else None
        t0 = time.perf_counter()
        try:
            outputs = await asyncio.to_thread(
                self._llm.chat,
                [r.conversation for r in reqs],
                sampling_params=[self.sampling_params(r.decoding) for r in reqs],
                use_tqdm=False,
                tools=native_tools or None,
                chat_template=self._template,
            )
        except Exception as exc:  # an engine failure is the harness's, not the agent's
            for r in reqs:
                if not r.future.done():
                    r.future.set_exception(HarnessError(f"vLLM in-process generation failed: {exc}", fatal=True))
            return
        latency = time.perf_counter() - t0
        for r, out in zip(reqs, outputs, strict=True):
            if r.future.done():
                continue
            gen = out.outputs[0]
            try:
                usage = Usage(prompt_tokens=len(out.prompt_token_ids or []), completion_tokens=len(gen.token_ids or []))
                turn = to_turn(
                    gen.text,
                    usage=usage,
                    finish_reason=gen.finish_reason,
                    latency_s=latency,
                    model_id=self.preset.hf_id,
                    tools=r.tools,
                    tool_mode=r.tool_mode,
                    text_calls=self.text_calls,
                    native_text_modes=self.native_modes,
                )
            except Exception as exc:
                r.future.set_exception(HarnessError(f"reading vLLM output failed: {exc}"))
                continue
            r.future.set_result(turn)

    async def aclose(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            try:
                await self._worker
            except (asyncio.CancelledError, RuntimeError):
                pass
            self._worker = None
        self._llm = None
