"""The one episode loop. Environments, backends, protocols and conditions are values plugged in.

The loop owns the budget (every model call counts, review calls of the self-check arms included),
asks the condition to render every Violation, and stops at a win, a loss or the budget.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from envs.contract import (
    Accepted,
    Action,
    BudgetUnit,
    CallReader,
    Condition,
    Env,
    EpisodeContext,
    ForceQuits,
    Opening,
    Outcome,
    Segmented,
    TextAnswer,
    ToolCall,
    Violation,
    call_reader,
    retry_writer,
)
from harness.answers import call_env, label, signature, submit_all
from harness.errors import HarnessError
from harness.replay import Replay, Unforkable
from harness.serving import Backend
from harness.types import CallLog, ModelTurn


@dataclass(frozen=True)
class Prefix:
    """What a fork replayed before its own calls: model calls, budget spent, tool calls submitted."""

    calls: int
    spent: int
    submitted: int
    # the part of the task the failure was in (envs.contract.Segmented; None: a task of one part)
    segment: int | None = None


@dataclass
class EpisodeResult:
    """What the loop observed; the runner turns it into an EpisodeRecord."""

    won: bool = False
    lost: bool = False
    done: bool = False
    calls: list[CallLog] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    transcript: list[dict[str, Any]] = field(default_factory=list)
    harness_error: str | None = None
    model_id: str | None = None
    # the model server is gone: the runner stops the whole run (never an agent failure)
    fatal: bool = False
    # tool calls handed to the environment (a rejected one counts; one skipped after it does not)
    submitted: int = 0
    # per outcome: "message" for a text turn to the simulated user of a tool environment (a
    # conversation, not an attempt at a call), else "action"
    outcome_kinds: list[str] = field(default_factory=list)
    # budget used, in the environment's unit (Opening.budget_unit)
    spent: int = 0
    budget_unit: BudgetUnit = "model_calls"
    # a fork's: what its replayed prefix spent (the calls, lists and counts above are its own)
    prefix: Prefix | None = None
    # the protocol ended the episode at its step limit (Opening.step_limit: BFCL's force-quit)
    force_quit: bool = False


def prompt_words(messages: list[dict[str, Any]]) -> int:
    """The paper's cost proxy: whitespace words of everything sent."""
    return sum(_words(m) for m in messages)


def _words(message: dict[str, Any]) -> int:
    return len(str(message.get("content") or "").split())


class WordCounts:
    """`prompt_words` for one episode's calls, each message counted once: a call resends the
    conversation so far, and counting it all again would make an episode's cost quadratic."""

    def __init__(self) -> None:
        # id -> (the message, held so that its id stays its own; the content counted; its words)
        self._seen: dict[int, tuple[dict[str, Any], Any, int]] = {}

    def __call__(self, messages: list[dict[str, Any]]) -> int:
        total = 0
        for m in messages:
            content = m.get("content")
            hit = self._seen.get(id(m))
            if hit is None or hit[0] is not m or hit[1] is not content:
                hit = self._seen[id(m)] = (m, content, _words(m))
            total += hit[2]
        return total


def _actions(turn: ModelTurn, opening: Opening, constrained: bool = False) -> list[Action] | Violation:
    if turn.refusal:  # a server that constrains output may answer with a refusal instead
        return Violation.refusal(turn.refusal)
    if turn.tool_calls:
        return list(turn.tool_calls)
    if constrained and turn.finish_reason == "length":
        return Violation.cut_at_max_tokens(turn.text)
    if "text" in opening.accepts:
        return [TextAnswer(text=turn.text, fenced=turn.fenced)]
    if turn.parse_error:
        return Violation.unparseable_call(turn.parse_error, turn.text)
    return Violation.no_action(turn.text)


def _read_calls(reader: CallReader | None, turn: ModelTurn) -> ModelTurn:
    """A text answer's calls as the environment's protocol decodes them (Opening.tool_prompt="env");
    calls a backend returned as calls (a reference agent's, a fork's replayed ones) stay as they are."""
    if reader is None or turn.tool_calls or turn.refusal:
        return turn
    calls, error = reader.read_calls(turn.text)
    return turn.model_copy(update={"tool_calls": calls, "parse_error": error})


def _assistant_message(turn: ModelTurn, native: bool) -> dict[str, Any]:
    if turn.message is not None:  # the protocol resends the server's message as it came (BFCL's)
        return dict(turn.message)
    msg: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
    # only calls the server returned natively: those parsed from text get a user-message reply
    calls = [(i, c) for i, c in enumerate(turn.tool_calls) if c.parse_mode == "native"] if native else []
    if calls:
        msg["tool_calls"] = [
            {
                "id": c.id or f"call_{i}",
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)},
            }
            for i, c in calls
        ]
    return msg


def _with_feedback(opening: Opening, answer: str, feedback: str) -> list[dict[str, Any]]:
    """`last` history: the opening again, plus the previous answer and its feedback only."""
    messages = [dict(m) for m in opening.messages]
    quoted = answer if opening.echo_chars is None else answer[: opening.echo_chars]
    messages[-1]["content"] = f"{messages[-1]['content']}\n\nYour previous answer was:\n{quoted}\n\n{feedback}"
    return messages


def _shared_prefix(before: list[dict[str, Any]], sent: list[dict[str, Any]]) -> int:
    """How many leading messages of `sent` are the previous call's own (the same objects: a full
    history resends them; a rebuilt one shares none)."""
    n = 0
    for old, new in zip(before, sent, strict=False):
        if old is not new:
            break
        n += 1
    return n


def full_messages(turns: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Each transcript turn's messages as sent: an action turn holds the messages after the first
    `messages_from` of the previous action turn's (0, or absent in older transcripts: all of
    them); a review turn holds what was added to its action's messages."""
    out: list[list[dict[str, Any]]] = []
    before: list[dict[str, Any]] = []
    for turn in turns:
        if turn.get("kind") == "review":
            out.append([*before, *turn.get("messages", [])])
            continue
        before = before[: turn.get("messages_from", 0)] + list(turn.get("messages", []))
        out.append(before)
    return out


def _log(turn: ModelTurn, messages: list[dict[str, Any]], kind: str, outcome: str, words: WordCounts) -> CallLog:
    return CallLog(
        kind=kind,
        prompt_tokens=turn.usage.prompt_tokens,
        completion_tokens=turn.usage.completion_tokens,
        latency_s=round(turn.latency_s, 4),
        finish_reason=turn.finish_reason,
        prompt_words=words(messages),
        parse_modes=[c.parse_mode for c in turn.tool_calls],
        tools=[c.name for c in turn.tool_calls],
        fenced=turn.fenced,
        truncated=turn.truncated,
        outcome=outcome,
    )


async def run_episode(env: Env, backend: Backend, ctx: EpisodeContext, replay: Replay | None = None) -> EpisodeResult:
    """Play one episode under `ctx.condition` (resolved when the spec loaded); with a `replay`,
    a fork: `backend` (a `harness.replay.Replaying`) answers with the source's calls up to its fork
    point, then its player plays on."""
    result = EpisodeResult()
    try:
        if ctx.condition is None:
            raise ValueError("an episode is played under a condition (EpisodeContext.condition)")
        await _play(env, backend, ctx.condition, ctx, result, replay)
    except HarnessError as exc:
        result.harness_error = str(exc)
        result.fatal = exc.fatal
    except Exception as exc:  # an environment or harness bug: this episode's harness error; the calls made stay
        result.harness_error = f"{type(exc).__name__}: {exc}"
    return result


async def _play(
    env: Env,
    backend: Backend,
    condition: Condition,
    s: EpisodeContext,
    result: EpisodeResult,
    replay: Replay | None = None,
) -> None:
    opening = await call_env(env, env.reset)
    result.budget_unit = opening.budget_unit
    # who writes a retry, decided once: the env (its own retry prompt around the condition's
    # feedback lines) or this loop (the condition's message after the call)
    writer = retry_writer(env, opening)
    if replay is not None and writer is not None:
        raise Unforkable(
            "cannot fork: the environment writes its own retry prompts (the veriharness protocol), their "
            "envelope fixed for one condition when the game starts, so a fork cannot render another's feedback"
        )
    # who reads calls out of text: the env, whose opening already describes the tools (its protocol's
    # own prompt: the backend is offered none), or the backend's parser
    reader = call_reader(env, opening)
    native = s.tool_mode == "native"
    messages = list(opening.messages)
    # a fork replays its source's calls under the source's condition and budget; from the fork
    # point's feedback on, the episode's own condition and its repair budget hold
    prefix = replay.calls if replay else 0
    limit = replay.budget if replay else s.budget
    per_tool = opening.budget_unit == "tool_calls"
    # a protocol's own decoding (veriharness) keeps the episode's constrained-decoding arm
    decoding = (
        opening.decoding.model_copy(update={"constrain": s.decoding.constrain}) if opening.decoding else s.decoding
    )
    words = WordCounts()
    rejected: set[str] = set()  # the signatures of the calls rejected so far
    before: list[dict[str, Any]] = []  # the previous action call's messages
    tools = opening.tools  # an environment may grow it (Accepted.tools)
    run_all = opening.answer_calls == "all"
    steps: dict[int | None, int] = {}  # answers with calls per part of the task (Opening.step_limit)
    # asked once: a runtime protocol's isinstance reads every member (20 us), twice a step
    segmented = env if isinstance(env, Segmented) else None
    while result.spent < limit:
        replayed = len(result.calls) < prefix
        mark = {"replayed": True} if replayed else {}
        review = (replay.before if replay and replayed else condition).review_prompt()
        offered = tools if reader is None else []
        turn = _read_calls(reader, await backend.generate(messages, offered, decoding, s.tool_mode))
        if not replayed:
            result.model_id = result.model_id or turn.model_id
        sent = messages
        # the messages this call added: the transcript grows with the conversation, not its square
        kept = _shared_prefix(before, sent)
        result.transcript.append(
            {
                "kind": "action",
                "messages_from": kept,
                "messages": sent[kept:],
                "answer": turn.model_dump(mode="json"),
                **mark,
            }
        )
        before = sent
        if review is not None and result.spent + 2 <= limit:
            result.spent += 1
            result.calls.append(_log(turn, sent, "action", "review", words))
            asked = [*messages, _assistant_message(turn, native), {"role": "user", "content": review}]
            revised = _read_calls(reader, await backend.generate(asked, offered, decoding, s.tool_mode))
            result.transcript.append(
                {
                    "kind": "review",
                    "messages": asked[len(messages) :],
                    "answer": revised.model_dump(mode="json"),
                    **mark,
                }
            )
            kind, log_messages, logged = "review", asked, revised
            if revised.tool_calls or ("text" in opening.accepts and revised.text.strip()):
                turn = revised
        else:
            kind, log_messages, logged = "action", sent, turn
        actions = _actions(turn, opening, decoding.constrain != "none")
        room = limit - result.spent if per_tool else None
        # the call that produced the executed action (the review's usage when there was a review),
        # logged before the environment runs so that a crash there keeps the call's cost
        log = _log(logged, log_messages, kind, "harness_error", words)
        log.signature = signature(actions, turn)
        log.call_signatures = [signature([a], turn) for a in actions] if isinstance(actions, list) else []
        log.repeats_rejected = log.signature in rejected
        result.calls.append(log)
        # the fork point's feedback is the episode's own condition's; earlier ones the source's
        said = replay.before if replay and replayed and len(result.calls) < prefix else condition
        part = segmented.segment() if segmented is not None else None
        outcome, replies, submitted, feedback, labels = await submit_all(
            env, actions, said, writer is None, native, room, run_all
        )
        calls = [a for a in actions if isinstance(a, ToolCall)] if isinstance(actions, list) else []
        if reader is not None and calls:  # the protocol brings an answer's results back in one message of its own
            replies = [reader.results_message(calls, [r["content"] for r in replies])]
        log.outcome, log.call_outcomes = label(outcome), labels
        if isinstance(outcome, Violation):
            rejected.add(log.signature)
        conversational = isinstance(actions, list) and isinstance(actions[0], TextAnswer) and "tool" in opening.accepts
        result.submitted += 0 if conversational else submitted
        result.spent += max(1, submitted) if per_tool else 1
        result.outcomes.append(outcome)
        result.outcome_kinds.append("message" if conversational else "action")
        result.transcript[-1]["outcome"] = outcome.model_dump(mode="json")
        if replay is not None and replayed:
            replay.check(len(result.calls) - 1, result.transcript[-1]["outcome"])
            if len(result.calls) == prefix:  # the fork point: what follows is the fork's own
                part = segmented.segment() if segmented is not None else None
                result.prefix = Prefix(calls=prefix, spent=result.spent, submitted=result.submitted, segment=part)
                result.calls, result.outcomes, result.outcome_kinds = [], [], []
                result.spent, result.submitted, limit, prefix = 0, 0, s.budget, 0
        if isinstance(outcome, Accepted) and outcome.done:
            result.done, result.won, result.lost = True, outcome.won, outcome.lost
            return
        if isinstance(actions, list) and any(isinstance(a, ToolCall) for a in actions):
            steps[part] = steps.get(part, 0) + 1
            if opening.step_limit is not None and steps[part] > opening.step_limit:
                result.done = result.lost = result.force_quit = True
                result.transcript[-1]["force_quit"] = True
                if isinstance(env, ForceQuits):  # the protocol's own verdict on a force-quit
                    verdict = await call_env(env, env.force_quit)
                    result.won, result.lost = verdict.won, verdict.lost
                return
        if isinstance(outcome, Accepted) and outcome.tools is not None:
            tools = outcome.tools
        if writer is not None:
            assert isinstance(outcome, Violation)  # anything else ended the episode above
            messages = writer.retry_messages(feedback)  # a prompt built, no I/O
        elif opening.history == "last":
            messages = _with_feedback(opening, turn.text, "\n\n".join(r["content"] for r in replies))
        else:
            messages = [*messages, _assistant_message(turn, native), *replies]
