"""The suite table: listing suites needs no suite's code, and says what the suite classes say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import envs

ROOT = Path(__file__).resolve().parents[2]


def test_every_suite_has_a_listing_line_that_matches_its_class() -> None:
    assert set(envs.ABOUT) == set(envs.SUITES)
    for name in envs.SUITES:
        suite = envs.get_suite(name)
        assert envs.ABOUT[name] == (suite.default_budget, suite.description), name


def test_describe_suites_imports_no_suite_code() -> None:
    code = (
        "import sys, envs; rows = envs.describe_suites(); "
        "heavy = sorted(m for m in sys.modules if m.startswith(('textworld', 'envs.textworld.', 'envs.tools.', "
        "'pydantic'))); print(len(rows), heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == f"{len(envs.SUITES)} []"
