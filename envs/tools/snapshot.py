"""Snapshots of the schemas the tools send to the model, kept in the repository.

A change of a field, a description or a list of allowed values changes what every model sees,
so the test suite fails on drift until the snapshot is regenerated on purpose:

    .venv/bin/python -m envs.tools.snapshot

The `enum` view holds state-dependent values, so it is taken on one reference task per suite.
`bank-disputes` (the bank domain's one-tool configuration) has one view, kept beside them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from envs.contract import EpisodeContext
from envs.tools.bank.disputes import BANK_DISPUTES
from envs.tools.bank.domain import BankTools
from envs.tools.calendar.domain import CalendarTools
from envs.tools.options import ToolsOptions
from envs.tools.suite import ToolsSuite
from envs.tools.tooling import SchemaView
from envs.tools.travel.domain import TravelTools

SCHEMA_DIR = Path(__file__).parent / "schemas"
REFERENCE_TASK = 0
VIEWS: tuple[SchemaView, ...] = ("open", "enum")


def suites() -> list[ToolsSuite]:
    return [BankTools(), TravelTools(), CalendarTools()]


def current(suite: ToolsSuite, view: SchemaView) -> dict[str, Any]:
    options = ToolsOptions(schema_view=view, faults=0.0, n_tasks=REFERENCE_TASK + 1)
    env = suite.make(suite.tasks(options)[REFERENCE_TASK], options, EpisodeContext(budget=4))
    return {spec.name: spec.openai() for spec in env.reset().tools}


def path_for(suite: ToolsSuite, view: SchemaView) -> Path:
    return SCHEMA_DIR / f"{suite.name}.{view}.json"


DISPUTES_PATH = SCHEMA_DIR / "bank-disputes.json"


def disputes_current() -> dict[str, Any]:
    options = BANK_DISPUTES.options_model(n_tasks=REFERENCE_TASK + 1)
    env = BANK_DISPUTES.make(BANK_DISPUTES.tasks(options)[REFERENCE_TASK], options, EpisodeContext(budget=4))
    return {spec.name: spec.openai() for spec in env.reset().tools}


def render(schemas: dict[str, Any]) -> str:
    return json.dumps(schemas, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


def write_all() -> list[Path]:
    SCHEMA_DIR.mkdir(exist_ok=True)
    written = []
    for suite in suites():
        for view in VIEWS:
            path = path_for(suite, view)
            path.write_text(render(current(suite, view)), encoding="utf-8")
            written.append(path)
    DISPUTES_PATH.write_text(render(disputes_current()), encoding="utf-8")
    return [*written, DISPUTES_PATH]


if __name__ == "__main__":
    for p in write_all():
        print(p)
