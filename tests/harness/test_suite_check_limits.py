"""A blown limit on external code is blamed on the limit, never on the suite (issue 66): a 1 ms
limit stopped a plugin's sound success check and the suite check called the suite broken; a limit
the OS timer cannot take (3e9 s) passed the start-up check and then failed every call."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[2]
PLUGIN = ROOT / "examples" / "plugins" / "shop_refunds.py"


def _cli(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness.cli", *args]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, **env})


def test_a_limit_too_short_for_a_sound_check_is_blamed_on_the_limit():
    done = _cli("suites", "shop-refunds", "--verify", "--plugin", str(PLUGIN), REPAIR_HARNESS_COMPUTE_LIMIT_S="0.001")
    flat = " ".join(done.stderr.split())
    assert done.returncode == 3 and "Traceback" not in flat, done.stderr
    assert "did not return within 0.001 s and was stopped (the limit on external code" in flat, flat
    assert "The suite was not found broken: raise the limit" in flat and "The suite is broken" not in flat, flat
    assert _cli("suites", "shop-refunds", "--verify", "--plugin", str(PLUGIN)).returncode == 0  # sound at 10 s


def test_limits_the_os_cannot_take_are_one_line_at_start_up():
    for name, value, says in [
        ("REPAIR_HARNESS_COMPUTE_LIMIT_S", "3e9", "at most 2,147,483,644 (what the OS timer takes), got '3e9'"),
        ("REPAIR_HARNESS_COMPUTE_MEMORY_MIB", "0", "takes a whole number of MiB from 16 to"),
    ]:
        done = _cli("suites", **{name: value})
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert done.stderr.startswith(f"error: {name} ") and says in done.stderr, done.stderr
