"""The record's columns, named once: every module of `results/` (and `show`) says `C.success`,
never the string "success".

The names come from the record model itself (`harness.types.EpisodeRecord`, `CallLog`,
`KeyFields`), written to `record_columns.json` beside this module: `results` reads records and
this file, never the harness (tests/results/test_columns.py fails while the file and the model
differ). A name the record does not have is an AttributeError where it is written, not a
KeyError in some report later.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

_NAMES = json.loads((Path(__file__).with_name("record_columns.json")).read_text(encoding="utf-8"))


class Names:
    """Attribute access to a fixed list of names: `C.success == "success"`."""

    def __init__(self, kind: str, names: list[str]):
        self._kind, self._names = kind, tuple(names)
        for name in names:
            setattr(self, name, name)

    def __getattr__(self, name: str) -> str:  # only reached for a name not set above
        raise AttributeError(f"the {self._kind} has no field {name!r}; it has: {', '.join(self._names)}")

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)


C = Names("record", _NAMES["record"])  # a record's fields: one column each in results.load's frame
CALL = Names("call log", _NAMES["call"])  # the fields of each entry of a record's `calls`
KEY_FIELDS: tuple[str, ...] = tuple(_NAMES["key"])  # what identifies an episode


# the model names of the reference agents (harness.agents.base.PREFIX; a test keeps them equal):
# their rates are ceilings and floors, and they spend no tokens
AGENT_PREFIX = "agent:"


def is_reference_agent(model: str) -> bool:
    return str(model).startswith(AGENT_PREFIX)
