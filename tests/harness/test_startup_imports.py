"""Listing and help import no model SDK, HTTP client, game generator or analysis stack.

(Their speed is measured by benchmarks/startup.py, not here.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("openai", "httpx", "textworld", "numpy", "pandas", "scipy", "statsmodels", "matplotlib")

PROBE = """
import sys
sys.argv = ["repair-harness", *sys.argv[1:]]
from harness.cli import app
try:
    app()
except SystemExit as e:
    assert not e.code, e.code
print(sorted({m.split(".")[0] for m in sys.modules} & set(%r)))
""" % (HEAVY,)


@pytest.mark.parametrize("args", [["--help"], ["suites"], ["conditions"]])
def test_listing_and_help_stay_light(args: list[str]) -> None:
    out = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "120"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
