"""Multi-turn slot filling: a scripted customer who reveals the arguments over several turns.

The customer is deterministic: a message from the agent reveals every withheld slot it asks
about (by keyword, Russian or English); a message that asks about none of them still gets the
next withheld slot (as a person answers "what else do you need?"). Slots are facts only the
customer knows: the task generator keeps each withheld one ambiguous in the context (two cards,
several flights, several free hours), so a value for a slot the customer has not revealed is an
invented one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

Lang = Literal["ru", "en"]

NOTHING_LEFT = {
    "ru": "Я рассказал(а) всё, что знаю. Оформите, пожалуйста.",
    "en": "That's all I know. Please go ahead.",
}
TRY_AGAIN = {"ru": "Попробуйте ещё раз, пожалуйста, я подожду.", "en": "Please try again, I can wait."}
CONFIRM = {"ru": "Да, верно: {value}.", "en": "Yes, that's right: {value}."}


def _plain(text: str) -> str:
    """Lower case, digit groups joined ('1 340' -> '1340'), so values are found however typed."""
    low = text.lower().replace("ё", "е").replace("\u00a0", " ")
    return re.sub(r"(?<=\d)[\s.,](?=\d{3}\b)", "", low)


def mentions(text: str, words: tuple[str, ...]) -> bool:
    low = _plain(text)
    return any(w in low for w in words)


@dataclass
class SlotStore:
    """What the customer has said, slot by slot. An empty value never overwrites a said one."""

    values: dict[str, str] = field(default_factory=dict)

    def update(self, new: dict[str, str | None]) -> list[str]:
        changed = []
        for slot, value in new.items():
            if value is None or not str(value).strip():
                continue
            if self.values.get(slot) != value:
                changed.append(slot)
            self.values[slot] = value
        return changed

    def revealed(self, slot: str) -> bool:
        return slot in self.values


@dataclass
class Correction:
    """The customer changes an already revealed slot; the change needs the agent's confirmation
    before an irreversible action that depends on it."""

    slot: str
    message: str  # what the customer writes ("oh sorry, not 1 200 but 1 340,50")
    value: str  # the new value as the customer states it
    value_words: tuple[str, ...]  # tokens that identify the new value in the agent's message
    fired: bool = False
    confirmed: bool = False

    @property
    def pending(self) -> bool:
        return self.fired and not self.confirmed


@dataclass
class Customer:
    lang: Lang
    phrases: dict[str, str]  # slot -> how the customer says it
    opening: list[str]  # slots the first message already holds
    withheld: list[str]  # slots held back, in the order the customer gives them
    words: dict[str, tuple[str, ...]]  # slot -> stems that show the agent asks for it
    correction: Correction | None = None
    store: SlotStore = field(default_factory=SlotStore)
    turns: int = 0

    def __post_init__(self) -> None:
        self.store.update({s: self.phrases[s] for s in self.opening})

    def missing(self) -> list[str]:
        return [s for s in self.withheld if not self.store.revealed(s)]

    def respond(self, text: str, idle: str | None = None) -> str:
        """The customer's answer to one message of the agent. `idle`: what to say when nothing is
        left to reveal (the environment knows whether the agent still has to retry)."""
        self.turns += 1
        c = self.correction
        if c is not None and c.pending and (mentions(text, c.value_words) or mentions(text, self.words[c.slot])):
            c.confirmed = True
            return CONFIRM[self.lang].format(value=c.value)
        missing = self.missing()
        asked = [s for s in missing if mentions(text, self.words[s])] or missing[:1]
        parts = []
        for slot in asked:
            self.store.update({slot: self.phrases[slot]})
            parts.append(self.phrases[slot])
        if c is not None and not c.fired and asked and not self.missing():
            c.fired = True
            self.store.update({c.slot: c.value})
            parts.append(c.message)
        if not parts:
            parts.append(idle or NOTHING_LEFT[self.lang])
        return " ".join(_sentence(p) for p in parts)


def _sentence(p: str) -> str:
    p = p.strip()
    p = p[0].upper() + p[1:] if p else p
    return p if p.endswith((".", "!", "?")) else p + "."
