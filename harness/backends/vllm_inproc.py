"""In-process vLLM (`vllm.LLM.chat`) for offline batch runs on one GPU, behind the Backend interface.

Concurrent `generate` calls (the runner's episodes) are gathered for a short window and sent to
`LLM.chat` as one batch, which is where vLLM's throughput comes from. `LLM.chat` applies the
model's chat template (with the tools, in native mode) but runs no tool parser, so every call is
read from the text by `harness.backends.parse`. A call written in the format the model family's
vLLM tool parser would have accepted counts as `native`; any other format counts as a call that
came back as text (`text_<mode>`) or, with `text_calls="violation"`, as an unparsed call.

vLLM is imported only when this backend is constructed; without it that raises MissingExtra.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from common.study import MAX_ANSWER_CHARS
from harness.backends.base import HarnessError, ToolMode
from harness.backends.parse import parse_tool_calls
from harness.backends.prompt_tools import with_tools_prompt
from harness.backends.server_proc import MissingExtra
from harness.backends.vllm_presets import EXTRA_HINT, VllmPreset, preset_row
from harness.types import Decoding, ModelTurn, ToolSpec, Usage

# the parse modes that vLLM's server-side parser of each family would have turned into tool calls
NATIVE_TEXT_MODES: dict[str, frozenset[str]] = {
    "hermes": frozenset({"tag"}),
    "llama3_json": frozenset({"llama", "bare"}),
    "mistral": frozenset({"tag"}),
}


def import_vllm() -> Any:
    try:
        return importlib.import_module("vllm")
    except ImportError as exc:
        raise MissingExtra(
            f"the in-process vLLM backend needs vLLM, which is not installed ({exc}); "
            f"install the extra: {EXTRA_HINT}"
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


def to_turn(text: str, prompt_tokens: int, completion_tokens: int, finish_reason: str | None, *,
            tools: list[ToolSpec], tool_mode: ToolMode, tool_parser: str, text_calls: str,
            latency_s: float, model_id: str) -> ModelTurn:
    """One generated text as a ModelTurn, its calls read by our parser."""
    truncated = len(text) > MAX_ANSWER_CHARS
    turn = ModelTurn(
        text=text[:MAX_ANSWER_CHARS], usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens),
        latency_s=latency_s, finish_reason=finish_reason, truncated=truncated, model_id=model_id,
    )
    parsed = parse_tool_calls(text, [t.name for t in tools], max_chars=MAX_ANSWER_CHARS)
    turn.fenced = parsed.fenced
    if not tools:
        return turn
    if tool_mode == "prompt":
        turn.tool_calls, turn.parse_error = parsed.calls, parsed.error
        return turn
    native = NATIVE_TEXT_MODES.get(tool_parser, frozenset({"tag"}))
    calls = []
    for n, c in enumerate(parsed.calls):
        if c.parse_mode in native:
            calls.append(c.model_copy(update={"parse_mode": "native", "id": c.id or f"call_{n}"}))
        elif text_calls == "violation":
            turn.parse_error = f"the tool call came back as {c.parse_mode} text, not in the model's tool-call format"
            return turn
        else:
            calls.append(c.model_copy(update={"parse_mode": f"text_{c.parse_mode}"}))
    turn.tool_calls, turn.parse_error = calls, parsed.error
    return turn


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

    llm: an already built `vllm.LLM`-like object (tests pass a double); by default one is built
    from the preset with the paper's settings (max model len, quantization, vLLM's generation
    config). `llm_kwargs` go to `vllm.LLM` (e.g. gpu_memory_utilization).
    """

    name = "vllm-inproc"

    def __init__(self, preset: str | VllmPreset, *, tool_parser: str | None = None, text_calls: str = "parse",
                 max_batch: int = 256, batch_window_s: float = 0.05, llm: Any = None,
                 sampling_params_cls: Any = None, **llm_kwargs: Any):
        # a preset name or an org/name id (which then needs tool_parser: it decides what is native)
        self.preset = preset_row(preset, tool_parser=tool_parser)
        self.text_calls, self.max_batch, self.batch_window_s = text_calls, max_batch, batch_window_s
        if llm is None:
            vllm = import_vllm()
            llm = vllm.LLM(model=self.preset.hf_id, max_model_len=self.preset.max_model_len,
                           quantization=self.preset.quantization, generation_config="vllm", **llm_kwargs)
            sampling_params_cls = vllm.SamplingParams
        self._llm, self._sampling_cls = llm, sampling_params_cls
        self._queue: asyncio.Queue[_Request] | None = None
        self._worker: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def model_id(self) -> str | None:
        return self.preset.hf_id

    def sampling_params(self, d: Decoding) -> Any:
        # special tokens stay in the text: Llama's <|python_tag|> and Mistral's [TOOL_CALLS] mark calls
        return self._sampling_cls(temperature=d.temperature, top_p=1.0 if d.top_p is None else d.top_p, max_tokens=d.max_tokens,
                                  seed=d.seed, skip_special_tokens=False)

    async def generate(self, messages: list[dict[str, Any]], tools: list[ToolSpec], decoding: Decoding,
                       tool_mode: ToolMode) -> ModelTurn:
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
                self._llm.chat, [r.conversation for r in reqs],
                sampling_params=[self.sampling_params(r.decoding) for r in reqs],
                use_tqdm=False, tools=native_tools or None,
            )
        except Exception as exc:  # noqa: BLE001  (an engine failure is the harness's, not the agent's)
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
                turn = to_turn(gen.text, len(out.prompt_token_ids or []), len(gen.token_ids or []),
                               gen.finish_reason, tools=r.tools, tool_mode=r.tool_mode,
                               tool_parser=self.preset.tool_parser, text_calls=self.text_calls,
                               latency_s=latency, model_id=self.preset.hf_id)
            except Exception as exc:  # noqa: BLE001
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
