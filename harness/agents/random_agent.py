"""`agent:random`: a seeded random action of the right shape each turn: the floor.

Of the reference it takes only the shape of an answer (a plan, a LeafOutput envelope, a tool
call); what goes in it is drawn at random: game commands from a fixed verb list and the words of
the opening prompt, tool arguments from the schema's enums or the prompt's words. Where the
reference of a tool task also answers in text, a turn is text with the share of text in it.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

from envs.contract import Action, Decoding, TextAnswer, ToolCall, ToolSpec
from harness.agents.base import ReferenceAgent, task_seed
from harness.agents.reader import _commands

VERBS = (
    "go north",
    "go south",
    "go east",
    "go west",
    "look",
    "inventory",
    "take {}",
    "open {}",
    "close {}",
    "unlock {} with {}",
    "put {} on {}",
    "insert {} into {}",
    "drop {}",
    "eat {}",
)
_WORD = re.compile(r"[a-z]{3,}")


class RandomAgent(ReferenceAgent):
    kind = "random"
    description = "a seeded random action of the right shape: the floor"

    def decide(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], reference: list[Action], decoding: Decoding
    ) -> Action:
        rng = random.Random(task_seed(reference, decoding.seed) + self.turns)
        opening = " ".join(str(m.get("content") or "") for m in messages if m.get("role") in ("system", "user"))
        words = sorted(set(_WORD.findall(opening.lower()))) or ["thing"]
        shape = reference[0]
        if isinstance(shape, ToolCall) and tools:
            # where the reference also answers in text (a turn's end, a question to the user), it
            # answers in text as often as the reference does, so it reaches the later turns
            if rng.random() < sum(isinstance(a, TextAnswer) for a in reference) / len(reference):
                return TextAnswer(text=" ".join(rng.choice(words) for _ in range(rng.randint(1, 8))))
            spec = rng.choice(tools)
            return ToolCall(name=spec.name, arguments=_arguments(spec.parameters, words, rng), id="call_0")
        found = _commands(shape) if isinstance(shape, TextAnswer) else None
        if found is None:
            return TextAnswer(text=rng.choice(words))
        data, commands = found
        plan = [_command(words, rng) for _ in range(rng.randint(1, len(commands)))]
        if isinstance(data.get("answer"), str):
            return TextAnswer(text=json.dumps({**data, "answer": json.dumps({"commands": plan})}))
        return TextAnswer(text=json.dumps({**data, "answer": {"commands": plan}}))


def _command(words: list[str], rng: random.Random) -> str:
    verb = rng.choice(VERBS)
    return verb.format(*(rng.choice(words) for _ in range(verb.count("{}"))))


def _arguments(schema: dict[str, Any], words: list[str], rng: random.Random) -> dict[str, Any]:
    props = schema.get("properties", {})
    required = set(schema.get("required", []))
    out: dict[str, Any] = {}
    for name, prop in props.items():
        if name not in required and rng.random() < 0.5:
            continue
        branches = [prop, *prop.get("anyOf", [])]
        enum = next((b["enum"] for b in branches if b.get("enum")), None)
        kind = next((b.get("type") for b in branches if b.get("type") not in (None, "null")), "string")
        if enum:
            out[name] = rng.choice(enum)
        elif kind in ("integer", "number"):
            out[name] = rng.randint(1, 600)
        else:
            out[name] = rng.choice(words)
    return out
