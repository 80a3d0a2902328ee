"""A suite's own bug is a harness error naming its file and line, never the agent's failure (issue
49 item 6): a validator that raises ValueError (not `fail`), a backend's KeyError, a success check's
TypeError. Before, a validator's ValueError reached the agent as feedback and agent:gold lost."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PLUGIN = ROOT / "examples" / "plugins" / "shop_refunds.py"
BUGS = {
    "validator": (
        '        shop: Shop = context_of(info)["shop"]\n',
        '        shop: Shop = context_of(info)["shop"]\n        int("x")  # the bug\n',
    ),
    "backend": (
        "    order = shop.orders[inp.order_id]\n    if order.refunded",
        '    order = shop.orders[inp.order_id + "?"]  # the bug\n    if order.refunded',
    ),
}


@pytest.mark.parametrize("where", sorted(BUGS))
def test_a_bug_in_a_plugin_is_a_harness_error_with_its_file_and_line(tmp_path, where):
    old, new = BUGS[where]
    source = PLUGIN.read_text()
    assert old in source
    plugin = tmp_path / "buggy.py"
    plugin.write_text(source.replace(old, new, 1))
    bug_line = next(i for i, line in enumerate(plugin.read_text().splitlines(), 1) if "# the bug" in line)
    cmd = [sys.executable, "-m", "harness.cli", "run", "--suite", "shop-refunds", "--plugin", str(plugin)]
    cmd += ["--model", "agent:gold", "--conditions", "raw", "--tasks", "5", "--out", str(tmp_path / "r")]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 4, done.stderr  # harness errors, never scored
    rows = [json.loads(x) for x in (tmp_path / "r" / "records.jsonl").read_text().splitlines()]
    assert rows and all(r["success"] is None for r in rows)
    assert all(
        f"buggy.py:{bug_line}" in r["harness_error"] and "a bug in the suite" in r["harness_error"] for r in rows
    )
