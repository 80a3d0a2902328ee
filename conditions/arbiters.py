"""Who decides that a call is wrong, and the words of the self-check arms.

`validator`: the environment's verdict, rendered by the feedback condition.
`self_check`: before execution the model reviews its own call and may revise it; it never sees
validator output, and after a rejection it hears only that the call failed (Huang et al., 2024).
`self_check_wait`: the same review step, prompted by a bare "Wait" after its own answer
(Self-Correction Bench). Chat APIs cannot portably continue an assistant message, so "Wait" is
sent as the next user message.
"""

from __future__ import annotations

from typing import Literal, get_args

Arbiter = Literal["validator", "self_check", "self_check_wait"]
ARBITERS: tuple[Arbiter, ...] = get_args(Arbiter)

REVIEW_PROMPT = (
    "Before your call is executed, review it. Check every argument against the task. "
    "If it is correct, repeat the same call; if not, answer with the corrected call. "
    "Answer in the same format as before."
)
WAIT_PROMPT = "Wait"


def review_prompt(arbiter: Arbiter) -> str | None:
    return {"validator": None, "self_check": REVIEW_PROMPT, "self_check_wait": WAIT_PROMPT}[arbiter]
