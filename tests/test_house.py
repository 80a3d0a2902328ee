"""The house checks pass on the whole tree: ruff (lint and format), mypy and vulture.

Each tool runs from the repository root with its configuration in pyproject.toml, as a
contributor runs it, using the executables of this interpreter's environment (the `[dev]`
extra installs them). A tool that is not installed fails the test: the checks are never skipped.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# not resolved: a virtual environment's python is a link out of the environment's bin/
BIN = Path(sys.executable).parent

CHECKS = {
    "ruff check": ["ruff", "check", "."],
    "ruff format": ["ruff", "format", "--check", "."],
    # the whole tree (`files` in [tool.mypy]); the cache (gitignored) makes a rerun take seconds, not a minute
    "mypy": ["mypy", "--cache-dir", str(ROOT / ".mypy_cache")],
    # the packages, benchmarks and examples with the whitelist ([tool.vulture])
    "vulture": ["vulture"],
}


@pytest.mark.parametrize("name", list(CHECKS))
def test_house_check_passes(name: str) -> None:
    tool, *args = CHECKS[name]
    exe = BIN / tool
    assert exe.is_file(), f"{tool} is not installed beside {sys.executable}: {BIN / 'pip'} install -e '.[dev]'"
    result = subprocess.run([str(exe), *args], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, (
        f"`{tool} {' '.join(args)}` exited {result.returncode}:\n{result.stdout}{result.stderr}"
    )
