"""An episode's transcript as inspect_ai chat messages (harness.readers.inspect_log writes them into logs).

The opening, then per model call the answer with its tool calls, and per call a tool message with
the environment's answer: a rejected call's carries a ToolCallError whose text is what the condition
told the agent (its violation's own words in the metadata). inspect_ai is imported only when
called: listing commands never pay for it.
"""

from __future__ import annotations

from typing import Any

PARSING_CODES = frozenset({"unparseable_call", "no_action", "unparseable_plan"})


def _message(m: dict[str, Any], mid: str) -> Any:
    content = str(m.get("content") or "")
    role = m.get("role")
    if role == "system":
        return inspect_model().ChatMessageSystem(id=mid, content=content)
    if role == "assistant":
        return inspect_model().ChatMessageAssistant(id=mid, content=content)
    return inspect_model().ChatMessageUser(id=mid, content=content)


def inspect_model() -> Any:
    # the [inspect] extra
    import inspect_ai.model as model

    return model


def messages(transcript: dict[str, Any], model_id: str) -> list[Any]:
    """The episode's conversation: the opening, then per call the model's answer (its tool calls)
    and per call a tool message with the environment's answer (an error for a rejected call)."""
    # the [inspect] extra
    from inspect_ai.tool import ToolCall, ToolCallError

    m = inspect_model()
    turns = transcript.get("turns") or []
    out: list[Any] = []
    n = 0

    def nid() -> str:
        nonlocal n
        n += 1
        return f"m{n:04d}"

    if turns:
        out += [_message(msg, nid()) for msg in turns[0].get("messages", [])]
    for i, turn in enumerate(turns):
        answer = turn.get("answer") or {}
        usage = answer.get("usage") or {}
        if turn.get("kind") == "review":
            out += [m.ChatMessageUser(id=nid(), content=str(x.get("content") or "")) for x in turn.get("messages", [])]
            out.append(
                m.ChatMessageAssistant(
                    id=nid(),
                    content=answer.get("text") or "",
                    model=model_id,
                    metadata={"kind": "review", "usage": usage},
                )
            )
            continue
        outcome = turn.get("outcome") or {}
        rejected = "code" in outcome
        calls = [
            ToolCall(
                id=str(c.get("id") or f"call_{i}_{j}"),
                function=str(c.get("name")),
                arguments=c.get("arguments") if isinstance(c.get("arguments"), dict) else {},
            )
            for j, c in enumerate(answer.get("tool_calls") or [])
        ]
        if not calls and rejected:  # no call could be read from the answer: the rejection still answers it
            calls = [
                ToolCall(
                    id=f"call_{i}_0",
                    function="(no call)",
                    arguments={},
                    parse_error=str(outcome.get("message") or outcome.get("code")),
                )
            ]
        out.append(
            m.ChatMessageAssistant(
                id=nid(),
                content=answer.get("text") or "",
                tool_calls=calls or None,
                model=model_id,
                metadata={"usage": usage, "finish_reason": answer.get("finish_reason")},
            )
        )
        replies = _replies(turns, i)
        for j, call in enumerate(calls):
            text = replies[j] if j < len(replies) else _outcome_text(outcome)
            # the viewer shows a tool error's message in place of the content: it is what the
            # condition told the agent, the violation's own words stay in the metadata
            error = (
                ToolCallError("parsing" if outcome.get("code") in PARSING_CODES else "unknown", text)
                if rejected
                else None
            )
            out.append(
                m.ChatMessageTool(
                    id=nid(),
                    content=text,
                    tool_call_id=call.id,
                    function=call.function,
                    error=error,
                    metadata={"outcome": outcome.get("code") or "accepted", "violation": outcome.get("message")},
                )
            )
        if not calls and "observation" in outcome:  # a text answer (the task's final reply)
            out.append(m.ChatMessageUser(id=nid(), content=_outcome_text(outcome)))
    return out


def _replies(turns: list[dict[str, Any]], i: int) -> list[str]:
    """What the harness sent back for turn i's calls: the next call's new messages after the
    answer (a full history), or what a rebuilt prompt (history `last`) added to the opening's
    last message: the quoted answer and the condition's feedback."""
    j = i + 1
    while j < len(turns) and turns[j].get("kind") == "review":
        j += 1
    if j >= len(turns):
        return []
    nxt = turns[j]
    if nxt.get("messages_from"):
        return [str(x.get("content") or "") for x in nxt.get("messages", [])[1:]]
    opening = [str(x.get("content") or "") for x in turns[0].get("messages", [])]
    sent = [str(x.get("content") or "") for x in nxt.get("messages", [])]
    if opening and sent and sent[-1].startswith(opening[-1]) and sent[-1] != opening[-1]:
        return [sent[-1][len(opening[-1]) :].lstrip("\n")]
    return []


def _outcome_text(outcome: dict[str, Any]) -> str:
    if "code" in outcome:
        return f"{outcome.get('code')}: {outcome.get('message') or ''}".strip()
    return str(outcome.get("observation") or "")
