"""An answer's actions handed to its environment, in order, by the loop (harness.loop): the
protocol's rule for an answer of several calls, each action's reply message and outcome label, and
the signature that tells two submissions apart.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any

from envs.contract import Accepted, Action, Condition, Env, Outcome, ToolCall, Violation
from harness.redact import cut
from harness.types import ModelTurn

NOT_EXECUTED = "not_executed"  # an action an earlier rejection in its answer, or the budget, stopped
# what one rendering of a rejection may hold, as a model's answer may (MAX_ANSWER_CHARS): a plugin's
# renderer that returns 50 MB would be written whole into the transcript and sent on every call
MAX_FEEDBACK_CHARS = 20_000


def rendered(condition: Condition, violation: Violation) -> list[str]:
    """The condition's feedback lines about a rejection, MAX_FEEDBACK_CHARS in all: the lines past
    it dropped, the line across it cut (the process's known keys masked first: a cut would leave a
    key's start), and a last line saying what was cut."""
    lines = condition.items(violation)
    total = sum(len(line) for line in lines)
    if total <= MAX_FEEDBACK_CHARS:
        return lines
    kept: list[str] = []
    room = MAX_FEEDBACK_CHARS
    for line in lines:
        if room <= 0:
            break
        # masked on a little more than is kept, not on megabytes: a key across the cut is in it
        # whole, or its start is (which the redactor masks as the key)
        kept.append(line if len(line) <= room else cut(line[: room + 4096], room))
        room -= len(line)
    return [*kept, f"[the feedback was {total:,} characters; only the first {MAX_FEEDBACK_CHARS:,} were kept]"]


async def call_env(owner: Any, method: Any, *args: Any) -> Any:
    """An environment's (or suite's) call: in a worker thread when it blocks, else on the loop."""
    if getattr(owner, "blocking", True):
        return await asyncio.to_thread(method, *args)
    return method(*args)


def _reply(text: str, call: Action | None, index: int, native: bool) -> dict[str, Any]:
    """The environment's answer to one action, as the next message."""
    if native and isinstance(call, ToolCall) and call.parse_mode == "native":
        return {"role": "tool", "tool_call_id": call.id or f"call_{index}", "content": text}
    return {"role": "user", "content": text}


async def submit_all(
    env: Env,
    actions: list[Action] | Violation,
    condition: Condition,
    replies_say_it: bool,
    native: bool,
    room: int | None = None,
    run_all: bool = False,
) -> tuple[Outcome, list[dict[str, Any]], int, list[str], list[str]]:
    """Submit the turn's actions in order; a rejection (unless `run_all`: the protocol runs every
    call, Opening.answer_calls), the end of the game or a spent budget (`room`: tool calls left,
    when the budget counts tool calls) stops the rest. Returns the answer's outcome (its first
    rejection, else the last outcome), one reply message per action (native tool calls each need
    their answer), how many actions reached the environment and the condition's feedback lines
    about the first rejection (the one place they are rendered), and each action's own outcome
    label. With `replies_say_it` false (the env writes the retry around the lines) a rejection
    gets no reply: nothing would send it."""
    if isinstance(actions, Violation):
        feedback = rendered(condition, actions)
        said = [{"role": "user", "content": "\n".join(feedback)}] if replies_say_it else []
        return actions, said, 0, feedback, []
    replies: list[dict[str, Any]] = []
    outcome: Outcome | None = None
    first_rejection: Violation | None = None
    feedback = []
    labels: list[str] = []
    stopped = False
    submitted = 0
    for i, action in enumerate(actions):
        if stopped or (room is not None and submitted >= room):
            labels.append(NOT_EXECUTED)
            replies.append(
                _reply(
                    "Not executed: an earlier call in this answer ended the turn, or the budget is spent.",
                    action,
                    i,
                    native,
                )
            )
            continue
        submitted += 1
        outcome = await call_env(env, env.submit, action)
        labels.append(label(outcome))
        if isinstance(outcome, Violation):
            lines = rendered(condition, outcome)
            if replies_say_it:
                replies.append(_reply("\n".join(lines), action, i, native))
            if first_rejection is None:
                first_rejection, feedback = outcome, lines
            stopped = not run_all
        else:
            replies.append(_reply(outcome.observation, action, i, native))
            if outcome.done:
                stopped = True
    assert outcome is not None
    ended = isinstance(outcome, Accepted) and outcome.done
    answer = outcome if ended or first_rejection is None else first_rejection
    return answer, replies, submitted, feedback, labels


def signature(actions: list[Action] | Violation, turn: ModelTurn) -> str:
    """A short hash of what a call submitted: each action's canonical JSON (a tool call's name and
    arguments, keys sorted; an answer's text), or the answer's text when no action could be read
    from it. Two calls with equal signatures submitted the same thing (ids and parse modes aside)."""
    if isinstance(actions, Violation):
        canonical: Any = {"text": turn.text}
    else:
        canonical = [
            {"name": a.name, "arguments": a.arguments} if isinstance(a, ToolCall) else {"text": a.text} for a in actions
        ]
    blob = json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]


def label(outcome: Outcome) -> str:
    if isinstance(outcome, Violation):
        return outcome.code
    return "won" if outcome.won else "lost" if outcome.lost else "done" if outcome.done else "accepted"
