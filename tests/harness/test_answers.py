"""What the loop takes of a condition's rendering (issue 57): a plugin's renderer that returns
50 MB of feedback was written whole into the transcript and sent on every later call; now the
lines are cut at MAX_FEEDBACK_CHARS, a key across the cut is masked first, and a last line says
what was cut."""

from __future__ import annotations

import asyncio

from envs.contract import ToolCall, Violation
from harness.answers import MAX_FEEDBACK_CHARS, submit_all
from harness.redact import MASK, remember

KEY = "sk-r57-feedback-0123456789abcdef"


class Huge:
    """A plugin's renderer gone wrong: 50 MB in two lines, a key across the cut."""

    name = feedback = "huge"
    cut = None

    def items(self, violation: Violation) -> list[str]:
        head = "x" * (MAX_FEEDBACK_CHARS - 10)
        return [head + KEY + "y" * 25_000_000, "z" * 25_000_000]


class Rejecting:
    blocking = False

    def submit(self, action: ToolCall) -> Violation:
        return Violation.unknown_tool(action.name, ["ls"])


def test_a_renderers_50_mb_is_cut_with_a_marker_and_no_key_start_left():
    remember(KEY)
    call = ToolCall(name="rm", arguments={})
    outcome, replies, _, feedback, _ = asyncio.run(submit_all(Rejecting(), [call], Huge(), True, False))
    assert isinstance(outcome, Violation)
    assert sum(len(line) for line in feedback[:-1]) <= MAX_FEEDBACK_CHARS + len(MASK)
    assert feedback[-1] == "[the feedback was 50,020,022 characters; only the first 20,000 were kept]"
    sent = replies[0]["content"]
    assert len(sent) < MAX_FEEDBACK_CHARS + 200 and sent.endswith(feedback[-1])
    assert "sk-r57" not in sent and MASK in sent  # the key's start, left by the cut, is masked
