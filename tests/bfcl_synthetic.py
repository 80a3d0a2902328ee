"""A synthetic model for BFCL multi-turn entries: BFCL's own ground truth, one step per call and a
text answer closing each turn, with one deviation per variant, each an ordinary thing a served
model does that meets BFCL's runner and `protocol=bfcl` alike (tests/bfcl_live_compare.py).

A test double, like the scripted servers in tests/: no number it produces is a model's.
"""

from __future__ import annotations

import json
from typing import Any

from envs.bfcl import data
from envs.bfcl.backends import functions
from envs.bfcl.calls import parse
from envs.bfcl.decode import call_text
from envs.contract import ToolCall
from tests.bfcl_replay_server import calls_message

# variant -> what it exercises (the differences, numbered as there)
VARIANTS = {
    "clean": "4 tool list, 6 sampling, 7 null content / tool_calls [] / compact arguments resent as served",
    "last_turn_force_quit": "1 force-quit in the last turn (21 steps of pwd), 9 no budget cut",
    "text_call": "2 a call written in the text ends the turn (FC)",
    "empty_arguments": '3 arguments "" end the turn, 5 the undecodable answer kept in the history (FC)',
    "one_answer": "every call of a turn in one answer, run in order",
}
DONE = "Done."


def _truth(entry: dict[str, Any]) -> list[list[ToolCall]]:
    method = functions(entry["involved_classes"]).__getitem__
    return [[parse(text, method) for text in turn] for turn in entry["ground_truth"]]


def _fc(calls: list[ToolCall], step: int) -> dict[str, Any]:
    # compact, ASCII-escaped arguments: a client that re-encodes them sends other bytes
    pairs = [(c.name, json.dumps(c.arguments, ensure_ascii=True, separators=(",", ":"))) for c in calls]
    return calls_message(pairs, step)


def _text(calls: list[ToolCall]) -> str:
    return "[" + ", ".join(call_text(c) for c in calls) + "]"


def script(entry: dict[str, Any], variant: str, fc: bool) -> list[dict[str, Any]]:
    """The answers, in order, of the synthetic model on `entry` under `variant`."""
    out: list[dict[str, Any]] = []

    def add(calls: list[ToolCall]) -> None:
        out.append(_fc(calls, len(out)) if fc else {"role": "assistant", "content": _text(calls)})

    def close() -> None:  # an answer in text, with an empty list of calls (FC): the turn ends
        out.append({"role": "assistant", "content": DONE, **({"tool_calls": []} if fc else {})})

    truth = _truth(entry)
    for t, turn in enumerate(truth):
        if t == 0 and variant == "text_call" and fc:
            c = turn[0]
            text = f"<tool_call>{json.dumps({'name': c.name, 'arguments': c.arguments})}</tool_call>"
            out.append({"role": "assistant", "content": text, "tool_calls": None})
            continue
        if t == 0 and variant == "empty_arguments" and fc:
            out.append(calls_message([(turn[0].name, "")], len(out)))
            continue
        if variant == "one_answer" and turn:
            add(turn)
        else:
            for c in turn:
                add([c])
        if t == len(truth) - 1 and variant == "last_turn_force_quit":
            for _ in range(data.STEP_LIMIT + 1 - len(turn)):
                add([ToolCall(name="pwd", arguments={})])
            continue  # BFCL's handler quits after the 21st step: no closing answer is asked for
        close()
    return out
