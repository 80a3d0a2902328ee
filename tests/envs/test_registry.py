"""The suite table: listing suites needs no suite's code; each line binds a suite of that name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import envs

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.extra("bfcl")
def test_every_line_of_the_table_binds_a_suite_of_its_name() -> None:
    for name, entry in envs.SUITES.items():
        suite = envs.get_suite(name)
        assert suite.name == name and entry.budget >= 1 and entry.description, name
        # the budget and the description have this one home: no suite class restates them
        assert not hasattr(suite, "default_budget") and not hasattr(suite, "description"), name


def test_describe_suites_imports_no_suite_code() -> None:
    code = (
        "import sys, envs; rows = envs.describe_suites(); "
        "heavy = sorted(m for m in sys.modules if m.startswith(('textworld', 'envs.textworld.', 'envs.tools.', "
        "'pydantic'))); print(len(rows), heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )
    assert out.stdout.strip() == f"{len(envs.SUITES)} []"
