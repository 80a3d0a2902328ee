"""Environments. The suite table is the one place a suite name is bound to its code, budget and description."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from envs import study
from envs.errors import UnknownName

if TYPE_CHECKING:  # pydantic and the env types are not needed to list suites
    from envs.contract import Suite


@dataclass(frozen=True)
class SuiteEntry:
    """A suite's line in the table: where its code is, the budget `run` uses unless --budget is
    given (model calls per episode; tool calls for TextWorld's step protocol), what it is."""

    factory: str  # "module:Class", imported only when the suite is used (TextWorld is heavy)
    budget: int
    description: str


_PAPER = (
    f"The paper's {len(study.GAME_SEEDS)} TextWorld games: seeds {study.GAME_SEEDS_SPEC}, {study.ROOMS} rooms, "
    f"{study.OBJECTS} objects, quest length {study.QUEST_LENGTH}, plans of at most {study.MAX_COMMANDS} "
    f"commands, budget {study.BUDGET}"
)

# a suite's name, its code, its budget and its description: here and nowhere else; listing reads
# the table without importing a suite's code (TextWorld's generator takes a second)
SUITES: dict[str, SuiteEntry] = {
    "bank-disputes": SuiteEntry(
        "envs.tools.bank.disputes:BankDisputes",
        4,
        "The seed's bank case: open_dispute behind a pydantic input contract (200 seeded tasks, RU/EN)",
    ),
    "paper-textworld": SuiteEntry("envs.textworld.suite:PaperTextWorld", study.BUDGET, _PAPER),
    "textworld": SuiteEntry(
        "envs.textworld.suite:TextWorld",
        study.BUDGET,
        "TextWorld games from any seeds and generation parameters (rooms, objects, quest_length)",
    ),
    # a slot task with a fault and a correction needs ~8 calls; the rest is room to repair
    "tools-bank": SuiteEntry(
        "envs.tools.bank.domain:BankTools",
        10,
        "Bank support: find_operations, open_dispute, block_card, get_dispute_status; RU/EN dirty input, slots, faults",
    ),
    "tools-travel": SuiteEntry(
        "envs.tools.travel.domain:TravelTools",
        10,
        "Travel: search_flights, book_flight, get_booking, cancel_booking; "
        "schedule-dependent values, cross-field rules, slots, faults",
    ),
    "tools-calendar": SuiteEntry(
        "envs.tools.calendar.domain:CalendarTools",
        10,
        "Calendar: list_meetings, create/move/cancel_meeting; time zones, rooms, overlap rules, slots, faults",
    ),
    # BFCL's multi-turn categories (package bfcl-eval, extra [bfcl]); gold needs up to 16 model
    # calls on base, 17 with missing parameters or functions, 37 on long_context: the rest is room
    # to repair
    **{
        f"bfcl-{c.replace('_', '-')}": SuiteEntry(
            f"envs.bfcl.suite:{cls}", budget, f"BFCL multi-turn {c} (200 entries; {what}); needs bfcl-eval"
        )
        for c, cls, budget, what in (
            ("base", "Base", 24, "file system, trading, travel, vehicle, messages, tickets, math, posts"),
            ("miss_param", "MissParam", 28, "turns that lack a parameter: ask for it"),
            ("miss_func", "MissFunc", 28, "a function held back until a later turn"),
            ("long_context", "LongContext", 48, "the same backends with long states"),
        )
    },
}


def suite_entry(name: str) -> SuiteEntry:
    if name not in SUITES:
        raise UnknownName("suite", name, list(SUITES))
    return SUITES[name]


def suite_class(name: str) -> type[Suite]:
    """A suite's class, not made: what it declares (its options model) without what making it
    checks (BFCL's suites need their package)."""
    module, attr = suite_entry(name).factory.split(":")
    cls: type[Suite] = getattr(importlib.import_module(module), attr)  # the table names suite classes only
    return cls


def get_suite(name: str) -> Suite:
    return suite_class(name)()


def suite_names() -> list[str]:
    return sorted(SUITES)


def describe_suites() -> list[dict[str, Any]]:
    """Name, description and budget of every suite, from the table (no suite is imported)."""
    return [
        {"name": n, "description": SUITES[n].description, "default_budget": SUITES[n].budget} for n in suite_names()
    ]
