"""Environments. The suite table is the one place a suite name is bound to its code."""

from __future__ import annotations

import importlib
from typing import Any

from common.errors import UnknownName  # noqa: F401  (re-exported)
from envs.contract import Suite

# name -> "module:factory"; imported only when the suite is used (TextWorld is heavy)
SUITES: dict[str, str] = {
    "bank-disputes": "envs.tools.bank.disputes:BankDisputes",
    "paper-textworld": "envs.textworld.suite:PaperTextWorld",
    "textworld": "envs.textworld.suite:TextWorld",
    "tools-bank": "envs.tools.bank:BankTools",
    "tools-travel": "envs.tools.travel:TravelTools",
    "tools-calendar": "envs.tools.calendar:CalendarTools",
}


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
