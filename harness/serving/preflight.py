"""Preflight: a few seconds per served model, before its first episode, so that a server's broken
tool parser or chat template stops the run instead of becoming episode failures.

Every request goes through the model's own backend (`OpenAIBackend.generate`): the messages, the
tool mode and the client-side fixes (llama.cpp's flattened tool turns) are the run's own.
- tool_call (native mode): one tool, one request that asks for it. Passes when the server returns
  a structured call of that tool whose arguments are a JSON object. Fails when the call comes back
  in the message content (the parser did not read it) or its arguments do not parse (`{}""`).
- tool_result (native mode): the same conversation after the call, with a short and a 300-character
  longer tool result, one token each. The server's prompt token counts must differ: equal counts
  mean the chat template dropped the tool message.
- determinism: two identical greedy requests. Different answers are a warning, recorded in
  run.json and said by the report: the server is not deterministic at temperature 0.
- context: the context length the server reports (`max_model_len` in vLLM's /v1/models), or for
  llama.cpp the one its refusal of a longer prompt names, against the preset's. Shorter fails.
In prompt mode the server's tool parser is not used and tool results go back as user messages:
the first two checks are skipped.
"""

from __future__ import annotations

import contextlib
import json
import re
import textwrap
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from envs.contract import Decoding, ToolSpec
from harness.errors import HarnessError, PreflightFailed, StartFailed
from harness.redact import cut
from harness.serving import placement
from harness.serving.backends.transport import MARK
from harness.serving.backends.turns import BAD_ARGUMENTS
from harness.serving.kinds import resolve
from harness.serving.llama.local import N_CTX
from harness.serving.models import ModelPool

Status = Literal["pass", "fail", "warn", "skip"]
TOOL = ToolSpec(
    name="get_weather",
    description="Look up the current weather of a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string", "description": "the city's name"}},
        "required": ["city"],
    },
)
ASK = [
    {"role": "system", "content": "You answer with tool calls."},
    {"role": "user", "content": "What is the weather in Paris right now? Call get_weather."},
]
LONGER = " The forecast stays the same for the rest of the week, with light wind from the west." * 4
_CONTEXT = re.compile(r"maximum context length is (\d+)|context window of (\d+)|max_model_len[^\d]{0,8}(\d+)")


@dataclass
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""


@dataclass
class Result:
    model: str
    endpoint: str
    checks: list[Check] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    def record(self) -> dict[str, Any]:
        return {
            "passed": not self.failed,
            "seconds": round(self.seconds, 2),
            "checks": {c.name: {"status": c.status, "detail": c.detail} for c in self.checks},
        }

    def line(self) -> str:
        marks = ", ".join(f"{c.name} {c.status}" for c in self.checks)
        return f"preflight {self.model} ({self.endpoint}): {marks} ({self.seconds:.1f} s)"


def _fix_parser(parser: str | None) -> str:
    which = f"the preset's tool parser ({parser})" if parser else "the tool parser of the model's family"
    return f"serve the model with {which} (vllm serve --tool-call-parser), or run with --tool-mode prompt"


async def _tool_call(backend: Any, parser: str | None) -> Check:
    turn = await backend.generate(ASK, [TOOL], Decoding(temperature=0.0, max_tokens=128), "native")
    native = [c for c in turn.tool_calls if c.parse_mode == "native"]
    if native:
        call = native[0]
        if call.name != TOOL.name:
            return Check(
                "tool_call",
                "fail",
                f"the server's call names {cut(call.name, 80)!r}, not {TOOL.name}",
                _fix_parser(parser),
            )
        if "city" not in call.arguments:
            return Check(
                "tool_call", "warn", f"a native call, but its arguments lack city: {json.dumps(call.arguments)[:120]}"
            )
        return Check("tool_call", "pass", f"a native call: {TOOL.name}({cut(json.dumps(call.arguments), 80)})")
    if turn.parse_error and BAD_ARGUMENTS in turn.parse_error:
        return Check(
            "tool_call",
            "fail",
            f"the server's call has arguments that do not parse: {turn.parse_error}",
            _fix_parser(parser),
        )
    if turn.tool_calls or turn.parse_error:
        how = turn.tool_calls[0].parse_mode if turn.tool_calls else "unreadable text"
        return Check(
            "tool_call",
            "fail",
            f"the tool call came back in the message content ({how}: {turn.text[:120]!r}), not as a tool call: "
            "the server's tool parser did not read it",
            _fix_parser(parser),
        )
    return Check(
        "tool_call",
        "warn",
        f"the model answered without a tool call ({cut(turn.text, 80)!r}): the parser was not exercised",
    )


async def _tool_result(backend: Any) -> Check:
    call = {"id": "call_0", "type": "function", "function": {"name": TOOL.name, "arguments": '{"city": "Paris"}'}}
    counts = []
    for content in ("sunny", "sunny." + LONGER):
        messages = [*ASK, {"role": "assistant", "content": "", "tool_calls": [call]}]
        messages.append({"role": "tool", "tool_call_id": "call_0", "content": content})
        # no tools offered: the check is of how the template renders the tool message, and is cheaper
        turn = await backend.generate(messages, [], Decoding(temperature=0.0, max_tokens=1), "native")
        counts.append(turn.usage.prompt_tokens)
    if None in counts:
        return Check(
            "tool_result",
            "skip",
            "the server reports no prompt tokens: cannot tell whether tool results reach the model",
        )
    grew = counts[1] - counts[0]
    if grew < len(LONGER) // 20:
        return Check(
            "tool_result",
            "fail",
            f"the chat template drops tool messages: a tool result {len(LONGER)} characters longer added "
            f"{grew} prompt tokens",
            "serve the model with a chat template that renders tool messages (the preset's chat_template; "
            "serve vllm --chat-template), or run with --tool-mode prompt",
        )
    return Check("tool_result", "pass", f"a tool result reaches the prompt ({len(LONGER)} characters: +{grew} tokens)")


async def _determinism(backend: Any, tool_mode: str) -> Check:
    ask = [{"role": "user", "content": "Name three colours of the rainbow in one short sentence."}]
    answers = []
    for _ in range(2):
        turn = await backend.generate(ask, [], Decoding(temperature=0.0, max_tokens=24, seed=0), tool_mode)
        answers.append(turn.text)
    if answers[0] != answers[1]:
        return Check(
            "determinism",
            "warn",
            f"two identical greedy requests gave different answers ({answers[0][:40]!r} vs {answers[1][:40]!r}): "
            "this server is not deterministic at temperature 0",
        )
    return Check("determinism", "pass", "two identical greedy requests gave the same answer")


async def _context(backend: Any, expected: int | None, llama: bool) -> Check:
    reported = None
    try:
        listing = json.loads(await backend.transport.get("models"))["data"]
        reported = next((m.get("max_model_len") for m in listing if m.get("id") == backend.model), None)
    except (HarnessError, ValueError, KeyError, TypeError, AttributeError):
        pass
    if reported is None and llama and expected:
        words = "hello " * (expected * 5 // 4)
        try:
            await backend.generate(
                [{"role": "user", "content": words}], [], Decoding(temperature=0.0, max_tokens=1), "prompt"
            )
            return Check(
                "context",
                "pass",
                f"a prompt of {expected * 5 // 4} words was taken: longer than the {expected} expected",
            )
        except HarnessError as exc:
            found = _CONTEXT.search(str(exc))
            reported = int(next(g for g in found.groups() if g)) if found else None
            if reported is None:
                return Check(
                    "context", "fail", f"a prompt over {expected} tokens failed without naming the context: {exc}"
                )
    if reported is None:
        return Check("context", "skip", "the server does not say its context length")
    if expected is None or reported == expected:
        return Check("context", "pass", f"{reported} tokens" + (" (as the preset says)" if expected else ""))
    if reported > expected:
        return Check("context", "pass", f"{reported} tokens, longer than the {expected} the preset says")
    return Check(
        "context",
        "fail",
        f"the server's context is {reported} tokens, the preset says {expected}: longer episodes would fail",
        f"serve the model with --max-model-len {expected}",
    )


async def check(backend: Any, model: str, tool_mode: str) -> Result:
    """The checks of one served model's backend (an OpenAIBackend). Each request carries the header
    `X-Repair-Harness-Request: preflight`, so that a capture of a run's requests (a protocol's,
    compared with its own runner's) can leave them out."""
    token = MARK.set("preflight")
    try:
        return await _check(backend, model, tool_mode)
    finally:
        MARK.reset(token)


async def _check(backend: Any, model: str, tool_mode: str) -> Result:
    ref = resolve(model)
    preset = ref.preset
    expected = preset.max_model_len if preset is not None else N_CTX if ref.kind.server == "llama.cpp" else None
    llama = getattr(backend, "constrain_style", "") == "llama.cpp"
    result, t0 = Result(model, backend.base_url), time.monotonic()
    steps: list[tuple[str, Any]] = []
    if tool_mode == "native":
        steps += [("tool_call", lambda: _tool_call(backend, preset.tool_parser if preset else None))]
        steps += [("tool_result", lambda: _tool_result(backend))]
    else:
        for name in ("tool_call", "tool_result"):
            result.checks.append(
                Check(
                    name,
                    "skip",
                    "prompt mode: the harness reads calls from the text and sends tool results as user messages",
                )
            )
    steps += [("determinism", lambda: _determinism(backend, tool_mode))]
    steps += [("context", lambda: _context(backend, expected, llama))]
    failed: str | None = None
    for name, run in steps:
        if failed is not None:  # the checks after a server's failure would only retry it
            result.checks.append(Check(name, "skip", f"not checked: the server failed the {failed} request"))
            continue
        try:
            result.checks.append(await run())
        except HarnessError as exc:
            # an answer every call would get (a key, a model, a redirect) already names its fix
            fix = "" if getattr(exc, "fatal", False) else "read the server's log"
            result.checks.append(Check(name, "fail", f"the server failed the request: {exc}", fix))
            failed = name
    result.seconds = time.monotonic() - t0
    return result


def failure(results: list[Result]) -> PreflightFailed:
    lines = [
        f"{r.model} ({r.endpoint}): {c.name}: {c.detail}" + (f". Fix: {c.fix}" if c.fix else "")
        for r in results
        for c in r.failed
    ]
    return PreflightFailed("\n".join(lines) + "\nNo episode was played; --no-preflight skips these checks.")


async def check_models(backends: dict[str, list[Any]], pool: Any, spec: Any, console: Any) -> list[Result]:
    """Check each served model of a phase (every endpoint of it); PreflightFailed on a failed check.
    Each result goes into run.json's `served` entry of its model."""
    results = []
    for model, found in backends.items():
        for backend in found:
            if not hasattr(backend, "transport"):  # a reference agent, in-process vLLM: no server
                continue
            result = await check(backend, model, spec.tool_mode)
            console.print(result.line(), highlight=False, markup=False)
            for c in result.checks:
                if c.status in ("fail", "warn"):
                    console.print(f"  {c.name}: {c.detail}", highlight=False, markup=False)
            pool.served.setdefault(model, {}).setdefault("preflight", []).append(result.record())
            results.append(result)
    if any(r.failed for r in results):
        raise failure(results)
    return results


async def check_served(spec: Any) -> list[Result]:
    """`repair-harness check`: open each model of the spec as a run would (its endpoints, or a
    server started for the check and stopped after it) and check it."""
    placed = placement.plan(spec, list(spec.models))
    results = []
    async with contextlib.AsyncExitStack() as stack:
        pool = ModelPool(spec, stack)
        for model in spec.models:
            try:
                backends = await pool.open(model, placed.server(model))
            except HarnessError as exc:
                raise StartFailed(str(exc)) from None
            for backend in backends:
                results.append(await check(backend, model, spec.tool_mode))
            await pool.close(model)
    return results


def check_lines(name: str, status: str, detail: str, fix: str | None, width: int) -> list[str]:
    """One check's lines as `check` prints them, each at most `width`: the detail wraps under
    itself, the fix under it (a model's long detail made 115-column lines)."""
    lines = textwrap.wrap(f"{name:<12} {status:<5} {detail}", width - 2, subsequent_indent=" " * 19)
    if fix:
        lines += textwrap.wrap(f"fix: {fix}", width - 2, initial_indent=" " * 13, subsequent_indent=" " * 18)
    return [f"  {line}" for line in lines]
