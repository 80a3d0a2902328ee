"""`repair-harness report` off a terminal: 80 columns when piped, COLUMNS respected."""

from __future__ import annotations

import os
import subprocess
import sys

CLI = [sys.executable, "-m", "harness.cli"]


def _piped(args: list[str], columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    if columns is not None:
        env["COLUMNS"] = columns
    done = subprocess.run([*CLI, *args], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_piped_report_is_80_columns_and_columns_is_respected(agents_run):
    piped = _piped(["report", str(agents_run)], None)  # stdout is a pipe: no terminal to ask
    assert max(len(line) for line in piped.splitlines()) <= 80
    wide = _piped(["report", str(agents_run)], "150")
    assert 80 < max(len(line) for line in wide.splitlines()) <= 150
    assert "(left out at 80 columns" in piped and "(left out at 150" not in wide
