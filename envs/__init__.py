"""Environments. The suite table is the one place a suite name is bound to its code."""

from __future__ import annotations

import importlib
from typing import Any

from envs.contract import Suite

# name -> "module:factory"; imported only when the suite is used (TextWorld is heavy)
SUITES: dict[str, str] = {
    "bank-disputes": "envs.bank.suite:BankDisputes",
    "paper-textworld": "envs.textworld.suite:PaperTextWorld",
    "textworld": "envs.textworld.suite:TextWorld",
    "tools-bank": "envs.tools.bank:BankTools",
    "tools-travel": "envs.tools.travel:TravelTools",
    "tools-calendar": "envs.tools.calendar:CalendarTools",
}


class UnknownName(ValueError):
    """An unknown registry name; the message names the bad value and the allowed ones."""

    def __init__(self, kind: str, value: str, allowed: list[str]):
        self.kind, self.value, self.allowed = kind, value, sorted(allowed)
        super().__init__(f"unknown {kind} {value!r}; allowed: {', '.join(self.allowed)}")


def get_suite(name: str) -> Suite:
    if name not in SUITES:
        raise UnknownName("suite", name, list(SUITES))
    module, attr = SUITES[name].split(":")
    return getattr(importlib.import_module(module), attr)()


def suite_names() -> list[str]:
    return sorted(SUITES)


def describe_suites() -> list[dict[str, Any]]:
    out = []
    for name in suite_names():
        s = get_suite(name)
        out.append({"name": name, "description": s.description, "default_budget": s.default_budget})
    return out
