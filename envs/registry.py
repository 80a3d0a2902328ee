"""The one kind of registry: suites, conditions, feedback families, reference agents and vLLM presets.

A registry maps a name to a value and remembers where each entry came from (`built-in`, or the
plugin that registered it), so a run can say which code a name meant. It refuses a second entry
under a name it holds (`DuplicateName`), and an unknown name is the usual `UnknownName`: the bad
value and the allowed ones, exit 2. Lookups happen when the spec loads, so a typo never waits
for a run to start.

An entry may be lazy: a "module:attribute" string imported on first lookup, so that listing
names imports none of the code behind them (TextWorld's generator takes a second to import).
Dependency-free, beside `envs.errors`, because every package registers here.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from envs.errors import UnknownName, UserError

T = TypeVar("T")

BUILT_IN = "built-in"

# who is registering now: `plugin_source` sets it while a plugin's code runs, so that its
# entries carry the plugin's name without the plugin saying so
_source: list[str] = [BUILT_IN]


class DuplicateName(UserError):
    """A name registered twice: the message names it and both sources."""


@dataclass(frozen=True)
class Entry(Generic[T]):
    name: str
    value: T
    source: str


@contextlib.contextmanager
def plugin_source(source: str) -> Iterator[None]:
    """Inside the block, new entries are recorded as registered by `source` (a plugin)."""
    _source.append(source)
    try:
        yield
    finally:
        _source.pop()


class Registry(Generic[T]):
    """Names of one kind (`kind` is how messages call them: "suite", "condition", ...)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, Entry[T] | tuple[str, str]] = {}

    def register(self, name: str, value: T) -> T:
        """Add `value` under `name`; a name already held is refused. Returns the value, so a
        registration can stand where the value is defined."""
        self._claim(name)
        self._entries[name] = Entry(name, value, _source[-1])
        return value

    def register_lazy(self, name: str, target: str) -> None:
        """Add the value that `target` ("module:attribute") names, imported on first lookup."""
        self._claim(name)
        self._entries[name] = (target, _source[-1])

    def _claim(self, name: str) -> None:
        if not isinstance(name, str) or not name.strip():
            raise UserError(f"a {self.kind} needs a non-empty name, got {name!r}")
        if name in self._entries:
            raise DuplicateName(
                f"{self.kind} {name!r} is already registered (by {self.source(name)}); "
                f"{_source[-1]} cannot register it again: choose another name"
            )

    def get(self, name: str) -> T:
        entry = self._entries.get(name)
        if entry is None:
            raise UnknownName(self.kind, name, self.names())
        if isinstance(entry, tuple):
            target, source = entry
            module, attr = target.split(":")
            entry = self._entries[name] = Entry(name, getattr(importlib.import_module(module), attr), source)
        return entry.value

    def source(self, name: str) -> str:
        """Who registered `name`: `built-in`, or the plugin's description."""
        entry = self._entries[name]
        return entry[1] if isinstance(entry, tuple) else entry.source

    def names(self) -> list[str]:
        """In registration order: the built-ins as the package lists them, then the plugins'."""
        return list(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def items(self) -> Iterator[tuple[str, T]]:
        """Every (name, value), each lazy entry imported."""
        for name in self.names():
            yield name, self.get(name)

    def unregister(self, name: str) -> None:
        """Remove an entry (a plugin whose import failed part-way leaves nothing behind)."""
        self._entries.pop(name, None)
