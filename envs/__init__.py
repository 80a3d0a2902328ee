"""Environments. The suite table is the one place a suite name is bound to its code."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from envs.errors import UnknownName

if TYPE_CHECKING:  # pydantic and the env types are not needed to list suites
    from envs.contract import Suite

# name -> "module:factory"; imported only when the suite is used (TextWorld is heavy)
SUITES: dict[str, str] = {
    "bank-disputes": "envs.tools.bank.disputes:BankDisputes",
    "paper-textworld": "envs.textworld.suite:PaperTextWorld",
    "textworld": "envs.textworld.suite:TextWorld",
    "tools-bank": "envs.tools.bank.domain:BankTools",
    "tools-travel": "envs.tools.travel.domain:TravelTools",
    "tools-calendar": "envs.tools.calendar.domain:CalendarTools",
}


# name -> (default budget, description): what listing shows, without importing a suite's code
# (TextWorld's generator takes a second). Each suite class carries the same two values;
# tests/envs/test_registry.py checks that they agree.
ABOUT: dict[str, tuple[int, str]] = {
    "bank-disputes": (4, "The seed's bank case: open_dispute behind a pydantic input contract (200 seeded tasks, RU/EN)"),
    "paper-textworld": (4, "The paper's 50 TextWorld games: seeds 20261051..20261100, 3 rooms, 4 objects, "
                           "quest length 2, plans of at most 4 commands, budget 4"),
    "textworld": (4, "TextWorld games from any seeds and generation parameters (rooms, objects, quest_length)"),
    "tools-bank": (10, "Bank support: find_operations, open_dispute, block_card, get_dispute_status; "
                       "RU/EN dirty input, slots, faults"),
    "tools-travel": (10, "Travel: search_flights, book_flight, get_booking, cancel_booking; "
                         "schedule-dependent values, cross-field rules, slots, faults"),
    "tools-calendar": (10, "Calendar: list_meetings, create/move/cancel_meeting; time zones, rooms, overlap rules, "
                           "slots, faults"),
}


def get_suite(name: str) -> Suite:
    if name not in SUITES:
        raise UnknownName("suite", name, list(SUITES))
    module, attr = SUITES[name].split(":")
    return getattr(importlib.import_module(module), attr)()


def suite_names() -> list[str]:
    return sorted(SUITES)


def describe_suites() -> list[dict[str, Any]]:
    """Name, description and default budget of every suite, from the table (no suite is imported)."""
    out = []
    for name in suite_names():
        if name in ABOUT:
            budget, description = ABOUT[name]
        else:  # a suite registered at run time (e.g. by a test) without a line in ABOUT
            s = get_suite(name)
            budget, description = s.default_budget, s.description
        out.append({"name": name, "description": description, "default_budget": budget})
    return out
