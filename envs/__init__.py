"""Environments. The suite registry is the one place a suite name is bound to its code, budget and description.

Built-in suites are registered here by where their code is ("module:Class"), imported only when
the suite is used; a plugin registers its own (`register_suite`) into the same registry.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from envs import study
from envs.registry import Registry

if TYPE_CHECKING:  # pydantic and the env types are not needed to list suites
    from pydantic import BaseModel

    from envs.contract import Suite


@dataclass(frozen=True)
class SuiteEntry:
    """A suite's line in the table: where its code is, the budget `run` uses unless --budget is
    given (model calls per episode; tool calls for TextWorld's step protocol), what it is."""

    # "module:Class", imported only when the suite is used (TextWorld is heavy); a suite class;
    # or a suite itself (what the authoring API of `envs.authoring` builds)
    factory: str | type[Suite] | Suite
    budget: int
    description: str

    def declared(self) -> type[Suite] | Suite:
        """The suite's class (or the suite), not made: what it declares without what making it
        checks (BFCL's suites need their package)."""
        if not isinstance(self.factory, str):
            return self.factory
        module, attr = self.factory.split(":")
        found: type[Suite] = getattr(importlib.import_module(module), attr)  # the built-ins name suite classes
        return found


_PAPER = (
    f"The paper's {len(study.GAME_SEEDS)} TextWorld games: seeds {study.GAME_SEEDS_SPEC}, {study.ROOMS} rooms, "
    f"{study.OBJECTS} objects, quest length {study.QUEST_LENGTH}, plans of at most {study.MAX_COMMANDS} "
    f"commands, budget {study.BUDGET}"
)

SUITES: Registry[SuiteEntry] = Registry("suite")


def register_suite(name: str, factory: str | type[Suite] | Suite, budget: int, description: str) -> SuiteEntry:
    """Add a suite: its code, the budget `run` uses unless --budget is given, a one-line description."""
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 1:
        raise ValueError(f"suite {name!r}: its budget must be an integer >= 1, got {budget!r}")
    return SUITES.register(name, SuiteEntry(factory, budget, description))


# a built-in suite's name, its code, its budget and its description: here and nowhere else;
# listing reads them without importing a suite's code (TextWorld's generator takes a second)
register_suite(
    "bank-disputes",
    "envs.tools.bank.disputes:BANK_DISPUTES",
    4,
    "The seed's bank case: open_dispute behind a pydantic input contract (200 seeded tasks, RU/EN)",
)
register_suite("paper-textworld", "envs.textworld.suite:PaperTextWorld", study.BUDGET, _PAPER)
register_suite(
    "textworld",
    "envs.textworld.suite:TextWorld",
    study.BUDGET,
    "TextWorld games from any seeds and generation parameters (rooms, objects, quest_length)",
)
# a slot task with a fault and a correction needs ~8 calls; the rest is room to repair
register_suite(
    "tools-bank",
    "envs.tools.bank.domain:BankTools",
    10,
    "Bank support: find_operations, open_dispute, block_card, get_dispute_status; RU/EN dirty input, slots, faults",
)
register_suite(
    "tools-travel",
    "envs.tools.travel.domain:TravelTools",
    10,
    "Travel: search_flights, book_flight, get_booking, cancel_booking; "
    "schedule-dependent values, cross-field rules, slots, faults",
)
register_suite(
    "tools-calendar",
    "envs.tools.calendar.domain:CalendarTools",
    10,
    "Calendar: list_meetings, create/move/cancel_meeting; time zones, rooms, overlap rules, slots, faults",
)
# BFCL's multi-turn categories (package bfcl-eval, extra [bfcl]); gold needs up to 16 model
# calls on base, 17 with missing parameters or functions, 37 on long_context: the rest is room
# to repair
for _category, _cls, _budget, _what in (
    ("base", "Base", 24, "file system, trading, travel, vehicle, messages, tickets, math, posts"),
    ("miss_param", "MissParam", 28, "turns that lack a parameter: ask for it"),
    ("miss_func", "MissFunc", 28, "a function held back until a later turn"),
    ("long_context", "LongContext", 48, "the same backends with long states"),
):
    register_suite(
        f"bfcl-{_category.replace('_', '-')}",
        f"envs.bfcl.suite:{_cls}",
        _budget,
        f"BFCL multi-turn {_category} (200 entries; {_what}); needs bfcl-eval",
    )


def suite_entry(name: str) -> SuiteEntry:
    return SUITES.get(name)


def options_model(name: str) -> type[BaseModel]:
    """A suite's options model, read without making the suite."""
    return suite_entry(name).declared().options_model


def get_suite(name: str) -> Suite:
    declared = suite_entry(name).declared()
    return declared() if isinstance(declared, type) else declared


def suite_names() -> list[str]:
    return sorted(SUITES)


def describe_suites() -> list[dict[str, Any]]:
    """Name, description, budget and source of every suite (no suite is imported)."""
    return [
        {"name": n, "description": e.description, "default_budget": e.budget, "source": SUITES.source(n)}
        for n in suite_names()
        for e in [suite_entry(n)]
    ]
