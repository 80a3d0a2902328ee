"""`agent:reader`: one seeded mistake, then repair from the feedback text alone.

The rule (what its success per condition means):
1. It plays the task's reference with one seeded mistake in the first action that can carry one:
   - `inadmissible_command` (TextWorld plans and envelopes): one command, seeded, with two
     adjacent letters swapped ("take red kye");
   - `typo` (tool calls): a string argument with letters, seeded, with two adjacent letters swapped;
   - `missing_field` (tool calls): a seeded argument left out.
2. It believes what it sent. After a rejection it reads only the feedback the loop sends it (the
   condition's JSON or prose, the veriharness repair lines, a raw message):
   - a typo'd value or command is replaced by the allowed value closest to it (difflib ratio;
     ties: the first listed), taken from the feedback's list of alternatives at the location of its
     mistake; a list cut mid-item is read as far as it goes. Without a list at that location it
     sends the same answer again.
   - a missing field is added back (it knows the value, it forgot the field) once the feedback
     names the field, as a location or in the message; otherwise it sends the same again.
   - another player's number rejected at a location (a fork of another's failure) is moved to
     the nearest value the feedback's bounds allow there (`>= 10 and <= 2048`: 4096 becomes
     2048); without bounds at that location it sends the same again.
3. An accepted action moves it to the next action of the reference.
It never reads the environment beyond the reference it starts from.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from conditions.feedback import FRAME, INVALID, RETRY
from envs.contract import Action, Decoding, TextAnswer, ToolCall, ToolSpec
from envs.errors import UserError
from envs.registry import Registry
from harness.agents.base import ReferenceAgent, task_seed

_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"')
_PROSE_ALLOWED = re.compile(r"The allowed values are: (.*)$")
_PROSE_AT = re.compile(r'The error was(?: .*?)? at ("(?:[^"\\]|\\.)*")')
_VH_PROSE = re.compile(r"The rejected value was at (.*?)\. The validator observed (.*)\. It expected (.*)\.$")
_REJECTED = (RETRY, INVALID, FRAME)
# what only feedback says, in a composition with no retry or invalid line: its prose sentences,
# and the keys of its JSON (an accepted call's answer is the tool's output, {"status": "ok", ...})
_PROSE_MARKS = ("Validator: ", "The error was", "You sent ", "The allowed values are: ", "There is no list of allowed")
_FEEDBACK_KEYS = frozenset({"error", "location", "observed", "allowed", "message", "traceback"})
# BFCL's own text for a call its execution failed (`bfcl-native`: its backend's words, nothing of ours)
_BFCL_FAILED = "Error during execution: "


@dataclass
class Mistake:
    index: int  # which action of the reference
    kind: str
    where: str  # the location suffix that names it: "commands[1]", "arguments.reason"
    field: str  # the argument name (tool calls) or "" (commands)
    command: int  # the command index (plans) or -1
    right: Any  # the reference's value (a missing field is put back with it)
    sent: Any  # what the agent believes (the typo'd value; None for a missing field)


def swap_letters(text: str, rng: random.Random) -> str:
    spots = [i for i in range(len(text) - 1) if text[i].isalpha() and text[i + 1].isalpha() and text[i] != text[i + 1]]
    if not spots:
        return text + "x"
    i = rng.choice(spots)
    return text[:i] + text[i + 1] + text[i] + text[i + 2 :]


def _commands(action: TextAnswer) -> tuple[dict[str, Any], list[str]] | None:
    """The command list inside a plan answer or a LeafOutput envelope."""
    try:
        data = json.loads(action.text)
        inner = data.get("answer")
        commands = (json.loads(inner) if isinstance(inner, str) else inner).get("commands")
    except (ValueError, AttributeError, TypeError):
        return None
    return (data, commands) if isinstance(commands, list) and commands else None


def put(action: Action, m: Mistake, value: Any) -> Action:
    """The action with `value` at the mistake's place (None: the field left out)."""
    if isinstance(action, ToolCall):
        args = {k: v for k, v in action.arguments.items() if k != m.field}
        if value is not None:
            args[m.field] = value
        return action.model_copy(update={"arguments": args})
    found = _commands(action)
    assert found is not None  # the mistake was found in these commands (Mistake.command)
    data, commands = found
    commands = [value if i == m.command else c for i, c in enumerate(commands)]
    if isinstance(data["answer"], str):
        data = {**data, "answer": json.dumps({**json.loads(data["answer"]), "commands": commands})}
    else:
        data = {**data, "answer": {**data["answer"], "commands": commands}}
    return TextAnswer(text=json.dumps(data))


def plant(reference: list[Action], rng: random.Random) -> Mistake | None:
    for index, action in enumerate(reference):
        if isinstance(action, TextAnswer):
            found = _commands(action)
            if found is None:
                continue  # a message to the customer carries no value to get wrong
            k = rng.randrange(len(found[1]))
            right = found[1][k]
            return Mistake(index, "inadmissible_command", f"commands[{k}]", "", k, right, swap_letters(right, rng))
        if action.name == "wait" or not action.arguments:
            continue
        fields = sorted(action.arguments)
        lettered = [
            f for f in fields if isinstance(action.arguments[f], str) and any(c.isalpha() for c in action.arguments[f])
        ]
        kind = "typo" if lettered and rng.random() < 0.5 else "missing_field"
        field = rng.choice(lettered if kind == "typo" else fields)
        right = action.arguments[field]
        sent = swap_letters(right, rng) if kind == "typo" else None
        return Mistake(index, kind, f"arguments.{field}", field, -1, right, sent)
    return None


def feedback_of(messages: list[dict[str, Any]]) -> tuple[str, bool]:
    """The text the loop sent back about the last answer, and whether it says the answer failed.
    `last`-history protocols rebuild the prompt with the feedback in it and only ask again after
    a failure; `full` history appends the replies after the agent's own message."""
    last = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=None)
    if last is None:
        return str(messages[-1].get("content") or ""), True
    replies = "\n".join(str(m.get("content") or "") for m in messages[last + 1 :])
    registered = bool(len(READERS) and _registered(replies))  # a plugin's wording it was taught
    return replies, any(r in replies for r in _REJECTED) or _says_rejected(replies) or registered


def _says_rejected(text: str) -> bool:
    for line in text.splitlines():
        line = line.strip()
        if line.startswith((*_PROSE_MARKS, _BFCL_FAILED)) or line.startswith("Traceback (most recent call last)"):
            return True
        data = _json(line)
        # a lone {"message": ...} is also what some tools answer (BFCL's): not taken for feedback
        if isinstance(data, dict) and (_is_problem(data) or (set(data) <= _FEEDBACK_KEYS and set(data) - {"message"})):
            return True
    return False


def _json(line: str) -> Any:
    if not line.startswith("{"):
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


def _is_problem(data: dict[str, Any]) -> bool:
    """An RFC 9457 problem object of a rejected call (the `problem` form)."""
    return data.get("status") == 422 and "title" in data


def _values(value: Any) -> list[str]:
    """Alternatives from a field: a list, a JSON list cut mid-way, or the cut form `a, b, c`."""
    if isinstance(value, list):
        return [str(v) for v in value]
    if not isinstance(value, str) or not value.strip():
        return []
    text = value.strip()
    if text.startswith("[") or text.startswith('"'):
        return [json.loads(f'"{q}"') for q in _QUOTED.findall(text)]
    return [v.strip() for v in text.rstrip(".").split(", ") if v.strip()]


# a condition of one's own (a renderer) is read by the parser its author registers: the text ->
# (location, alternatives) of each item it states (docs/plugins.md, "What agent:reader reads")
FeedbackParser = Callable[[str], list[tuple[str | None, list[str]]]]
READERS: Registry[FeedbackParser] = Registry("feedback reader")


def register_reader(name: str, parse: FeedbackParser) -> FeedbackParser:
    """Teach agent:reader the wording of a condition of one's own (usually registered beside it)."""
    if not callable(parse):
        raise UserError(f"feedback reader {name!r} must be a function of the feedback text")
    return READERS.register(name, parse)


def _registered(text: str) -> list[tuple[str | None, list[str]]]:
    return [item for _, parse in READERS.items() for item in parse(text)]


def read_feedback(text: str) -> list[tuple[str | None, list[str]]]:
    """(location, alternatives) of every item the feedback states, in whichever form it came: the
    built-in compositions' prose, json and problem forms, the veriharness lines, and any wording a
    plugin registered a parser for."""
    items: list[tuple[str | None, list[str]]] = _registered(text) if len(READERS) else []
    for line in text.splitlines():
        line = line.strip().removeprefix("- ")  # veriharness lists its repair items
        data = _json(line.removeprefix("typed_failure="))
        if isinstance(data, dict) and _is_problem(data):
            for entry in data.get("invalid-params") or []:
                if isinstance(entry, dict) and "name" in entry:
                    items.append((str(entry["name"]), _values(entry.get("allowed"))))
            continue
        if isinstance(data, dict) and "location" in data:
            items.append((str(data["location"]), _values(data.get("allowed", data.get("expected")))))
            continue
        if (m := _VH_PROSE.search(line)) is not None:
            items.append((m.group(1), _values(m.group(3))))
            continue
        if (at := _PROSE_AT.search(line)) is not None:
            allowed = _PROSE_ALLOWED.search(line)
            items.append((json.loads(at.group(1)), _values(allowed.group(1)) if allowed else []))
    return items


_BOUND = re.compile(r"(>=|<=|>|<) (-?\d+(?:\.\d+)?)|a multiple of (\d+(?:\.\d+)?)")
_BOUND_KEYS = {">=": "ge", ">": "gt", "<=": "le", "<": "lt"}


def _prose_bounds(text: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for op, number, multiple in _BOUND.findall(text):
        if multiple:
            out["multiple_of"] = float(multiple)
        else:
            out[_BOUND_KEYS[op]] = float(number)
    return out


def read_bounds(text: str) -> dict[str, dict[str, float]]:
    """location -> the numeric bounds the feedback states there (json `bounds`, a problem's
    `invalid-params` entry, or the prose "The allowed values are: >= 10 and <= 2048.")."""
    found: dict[str, dict[str, float]] = {}
    for line in text.splitlines():
        line = line.strip().removeprefix("- ")
        data = _json(line)
        entries = (data.get("invalid-params") or []) if isinstance(data, dict) and _is_problem(data) else [data]
        for entry in entries:
            if isinstance(entry, dict) and isinstance(entry.get("bounds"), dict):
                where = entry.get("location", entry.get("name"))
                found[str(where)] = {k: float(v) for k, v in entry["bounds"].items() if isinstance(v, (int, float))}
            elif isinstance(entry, dict) and isinstance(entry.get("bounds"), str):  # cut to a string
                found[str(entry.get("location", entry.get("name")))] = _prose_bounds(entry["bounds"])
        at, allowed = _PROSE_AT.search(line), _PROSE_ALLOWED.search(line)
        if at is not None and allowed is not None and _prose_bounds(allowed.group(1)):
            found[json.loads(at.group(1))] = _prose_bounds(allowed.group(1))
    return found


def _within(value: float, bounds: dict[str, float], whole: bool) -> float:
    """The value moved to the nearest one the bounds allow."""
    step = 1 if whole else 1e-9
    if "ge" in bounds:
        value = max(value, bounds["ge"])
    if "gt" in bounds and value <= bounds["gt"]:
        value = bounds["gt"] + step
    if "le" in bounds:
        value = min(value, bounds["le"])
    if "lt" in bounds and value >= bounds["lt"]:
        value = bounds["lt"] - step
    if bounds.get("multiple_of"):
        value = round(value / bounds["multiple_of"]) * bounds["multiple_of"]
    return value


def repair(m: Mistake, text: str) -> tuple[bool, Any]:
    """Whether the feedback lets it fix the mistake, and the value it then sends."""
    if m.kind == "out_of_range":
        bounds = next((b for loc, b in read_bounds(text).items() if loc.endswith(m.where)), None)
        if not bounds:
            return False, m.sent
        value = _within(float(m.sent), bounds, isinstance(m.sent, int))
        return True, int(value) if isinstance(m.sent, int) else value
    items = read_feedback(text)
    if m.kind == "missing_field":
        named = (
            any(loc is not None and loc.endswith(m.where) for loc, _ in items)
            or re.search(rf"\b{re.escape(m.field)}\b", text) is not None
        )
        return (True, m.right) if named else (False, None)
    options = [v for loc, values in items if loc is not None and loc.endswith(m.where) for v in values]
    options = [o for o in options if o != m.sent]
    if not options:
        return False, m.sent
    best = max(options, key=lambda o: difflib.SequenceMatcher(None, m.sent, o).ratio())
    return True, best


class ReaderAgent(ReferenceAgent):
    kind = "reader"
    description = "one seeded mistake, then repairs from the feedback text alone: the condition's repair ceiling"

    def __init__(self, env: Any = None):
        super().__init__(env)
        self.plan: list[Action] | None = None
        self.mistake: Mistake | None = None
        self.pos = 0
        # the plan's position that holds another player's call (a fork of another's failure)
        self.foreign: int | None = None
        self.parts_ended = 0  # answers in text another player gave (each ends a part: BFCL's turn)

    def adopt(self, sent: Action) -> None:
        """It believes what was sent at its position: another's failed call is the one it repairs.
        Another's play is not its own: it plants no mistake of its own in it. Another's answer in
        text ends a part of the task (BFCL: a turn), and its plan moves to the part that follows;
        another's call where its plan would end the part is one more call of that part."""
        assert self.plan is not None  # observe() decided first
        if self.mistake is not None:
            self.plan[self.mistake.index] = self.reference()[self.mistake.index]
            self.mistake = None
        if isinstance(sent, TextAnswer):
            self.parts_ended += 1
            ends = [i for i, a in enumerate(self.plan) if isinstance(a, TextAnswer)]
            # at the part's own end: the next accepted reply moves it to the next part's first call
            self.pos = ends[self.parts_ended - 1] if self.parts_ended <= len(ends) else len(self.plan) - 1
            return
        if isinstance(self.plan[self.pos], TextAnswer):
            self.plan.insert(self.pos, sent)
        else:
            self.plan[self.pos] = sent
        self.foreign = self.pos

    def decide(
        self, messages: list[dict[str, Any]], tools: list[ToolSpec], reference: list[Action], decoding: Decoding
    ) -> Action:
        if self.plan is None:
            rng = random.Random(task_seed(reference, decoding.seed))
            self.mistake = plant(reference, rng)
            self.plan = list(reference)
            if self.mistake is not None:
                planted = self.mistake
                self.plan[planted.index] = put(reference[planted.index], planted, planted.sent)
            return self.plan[0]
        text, rejected = feedback_of(messages)
        m = self.mistake
        if not rejected:
            self.pos = min(self.pos + 1, len(self.plan) - 1)
        elif self.pos == self.foreign:
            self.plan[self.pos] = repair_located(self.plan[self.pos], reference, self.pos, text)
        elif m is not None and self.pos == m.index:
            fixed, value = repair(m, text)
            if fixed:
                m.sent = value
                self.plan[m.index] = put(self.plan[m.index], m, value)
        return self.plan[self.pos]


def located(action: Action, reference: list[Action], pos: int, location: str) -> Mistake | None:
    """Another's call read as a mistake at the location a feedback names: a value there (a
    command, a string argument), or an argument absent from it that the reference's call to the
    same tool at this position has (it knows that value, as it knows its own)."""
    if isinstance(action, TextAnswer):
        found = _commands(action)
        at = re.search(r"commands\[(\d+)\]$", location)
        if found is None or at is None or int(at.group(1)) >= len(found[1]):
            return None
        k = int(at.group(1))
        return Mistake(pos, "inadmissible_command", f"commands[{k}]", "", k, None, found[1][k])
    field = location.rsplit(".", 1)[-1]
    if isinstance(action.arguments.get(field), str):
        return Mistake(pos, "typo", f"arguments.{field}", field, -1, None, action.arguments[field])
    value = action.arguments.get(field)
    if isinstance(value, (int, float)) and not isinstance(value, bool):  # a number out of its bounds
        return Mistake(pos, "out_of_range", f"arguments.{field}", field, -1, None, value)
    known = reference[pos] if pos < len(reference) else None
    if field not in action.arguments and isinstance(known, ToolCall) and known.name == action.name:
        if field in known.arguments:
            return Mistake(pos, "missing_field", f"arguments.{field}", field, -1, known.arguments[field], None)
    return None


def repair_located(action: Action, reference: list[Action], pos: int, text: str) -> Action:
    """Another's rejected call, with each value the feedback locates and lists alternatives for
    replaced by the closest (a field it names put back); unchanged where the feedback says nothing
    it can use."""
    for location, _ in read_feedback(text):
        m = None if location is None else located(action, reference, pos, location)
        if m is not None:
            fixed, value = repair(m, text)
            if fixed:
                action = put(action, m, value)
    return action
