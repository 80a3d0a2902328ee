"""Registries left as a test found them: a test that loads a plugin in this process (its suites,
conditions, agents, readers, importers) takes them out again afterwards, so that no later test
meets them (`list(AGENTS)` playing a plugin's agent on a suite it was not written for)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from envs.registry import Registry


@contextmanager
def isolated() -> Iterator[None]:
    from conditions import CONDITIONS, FAMILIES
    from envs import SUITES
    from harness import plugins
    from harness.agents import AGENTS
    from harness.agents.reader import READERS
    from harness.imports import IMPORTERS
    from harness.serving.kinds import MODEL_KINDS
    from harness.serving.vllm.rows import PRESETS

    registries: tuple[Registry[Any], ...] = (
        SUITES,
        CONDITIONS,
        FAMILIES,
        AGENTS,
        READERS,
        IMPORTERS,
        PRESETS,
        MODEL_KINDS,
    )
    saved = [dict(r._entries) for r in registries]
    loaded = dict(plugins._LOADED)
    try:
        yield
    finally:
        for registry, entries in zip(registries, saved, strict=True):
            registry._entries.clear()
            registry._entries.update(entries)
        plugins._LOADED.clear()
        plugins._LOADED.update(loaded)


@pytest.fixture(autouse=True)
def no_plugin_left() -> Iterator[None]:
    """Autouse in a module that imports it: each test's plugins are gone after it."""
    with isolated():
        yield
