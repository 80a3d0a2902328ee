"""A suite's own bug is a harness error naming its file and line, never the agent's failure (issue
49 item 6): a validator that raises ValueError (not `fail`), a backend's KeyError, a success check's
TypeError. Before, a validator's ValueError reached the agent as feedback and agent:gold lost."""

import json
import os
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
    cmd += ["--no-suite-check"]  # what reaches the records when the suite check is skipped
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 4, done.stderr  # harness errors, never scored
    rows = [json.loads(x) for x in (tmp_path / "r" / "records.jsonl").read_text().splitlines()]
    assert rows and all(r["success"] is None for r in rows)
    assert all(
        f"buggy.py:{bug_line}" in r["harness_error"] and "a bug in the suite" in r["harness_error"] for r in rows
    )


def test_the_suite_check_stops_a_broken_plugin_before_anything_plays(tmp_path):
    """agent:gold plays each planned task first; a task it cannot win stops the run with exit 3,
    naming the task and what went wrong, and writes nothing (issue 49's suite preflight)."""
    source = PLUGIN.read_text()
    # a rule that turns down the gold call itself: a Violation, no exception
    old = '        shop: Shop = context_of(info)["shop"]\n'
    rule = old + '        if getattr(self, "amount", None) is not None:\n'
    rule += '            raise fail("no_refunds", "refunds are closed", "amount", str(self.amount), [])\n'
    for name, text, said in (
        ("rule.py", source.replace(old, rule, 1), "the suite rejected gold call 2"),
        ("bug.py", source.replace(*BUGS["validator"], 1), "raised ValueError"),
    ):
        plugin = tmp_path / name
        plugin.write_text(text)
        for args in (
            ["run", "--suite", "shop-refunds", "--model", "agent:reader", "--conditions", "raw"],
            ["suites", "shop-refunds", "--verify"],
        ):
            out = tmp_path / f"r-{name}"
            cmd = [sys.executable, "-m", "harness.cli", *args, "--plugin", str(plugin)]
            done = subprocess.run(
                [*cmd, *(["--out", str(out)] if args[0] == "run" else [])],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=120,
            )
            flat = " ".join(done.stderr.split())
            assert done.returncode == 3, done.stderr
            assert "shop-refunds task shop-refunds-0000" in flat and said in flat and "Traceback" not in flat, flat
            assert not out.exists()
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "suites", "shop-refunds", "--verify", "--plugin", str(PLUGIN)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "agent:gold wins 24 of 24 tasks" in done.stdout, done.stdout + done.stderr


def test_a_mended_plugin_replays_its_harness_errors_with_plugin_changed(tmp_path):
    """The bug recorded harness errors; the plugin is mended in place; `--retry-errors` alone is
    refused (the code changed), `--retry-errors --plugin-changed` plays them again under the new
    code and run.json's plugin history says which records the old code scored (issue 49 item 7)."""
    plugin = tmp_path / "shop.py"
    plugin.write_text(PLUGIN.read_text().replace(*BUGS["backend"], 1))
    base = [sys.executable, "-m", "harness.cli", "run", "--suite", "shop-refunds", "--plugin", str(plugin)]
    base += ["--model", "agent:gold", "--conditions", "raw", "--tasks", "4", "--out", str(tmp_path / "r")]

    def run(*extra):
        return subprocess.run([*base, *extra], cwd=ROOT, capture_output=True, text=True, timeout=120)

    assert run("--no-suite-check").returncode == 4  # refund's KeyError: every episode a harness error
    plugin.write_text(PLUGIN.read_text())  # mended
    refused = run("--retry-errors")
    assert refused.returncode == 2 and "its source is now" in refused.stderr, refused.stderr
    done = run("--retry-errors", "--plugin-changed")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(x) for x in (tmp_path / "r" / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and all(r["success"] for r in rows)
    history = json.loads((tmp_path / "r" / "run.json").read_text())["plugin_history"]
    assert len(history) == 1 and history[0]["scored_under_the_old_code"] == 0
    assert history[0]["changed"][0]["sha256_then"] != history[0]["changed"][0]["sha256_now"]
    assert run("--plugin-changed").returncode == 2  # only with --retry-errors


SOLVED = "    return checked and [(o.id, o.reason, o.refunded) for o in refunded] == ["
DRAW = "def task(seed: int, shop: Shop) -> TaskDraft:\n"


def _verify(plugin: Path) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "harness.cli", "suites", "shop-refunds", "--verify", "--plugin", str(plugin)]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("answer", ["'False'", "[False]", "{'solved': False}", "None"])
def test_a_success_check_that_returns_no_bool_stops_at_the_suite_check(tmp_path, answer):
    """Issue 57: `bool()` took 'False', [False] or a dict for true, so every wrong answer was scored
    solved and the suite check passed. Now a harness error naming the plugin's check, the suite
    check stops the run, and a run without it records harness errors, none solved."""
    source = PLUGIN.read_text()
    assert SOLVED in source
    plugin = tmp_path / "nonbool.py"
    plugin.write_text(
        source.replace(
            SOLVED,
            f"    return {answer} if shop else checked and [(o.id, o.reason, o.refunded) for o in refunded] == [",
            1,
        )
    )
    line = next(i for i, text in enumerate(plugin.read_text().splitlines(), 1) if text.startswith("def solved("))
    done = _verify(plugin)
    flat = " ".join(done.stderr.split())
    assert done.returncode == 3 and "Traceback" not in flat, done.stdout + done.stderr
    assert f"the success check of suite 'shop-refunds' raised TypeError: it returned {answer}" in flat, flat
    assert f"nonbool.py:{line}" in flat, flat
    cmd = [sys.executable, "-m", "harness.cli", "run", "--suite", "shop-refunds", "--plugin", str(plugin)]
    cmd += ["--model", "agent:random", "--conditions", "raw", "--tasks", "3", "--out", str(tmp_path / "r")]
    done = subprocess.run([*cmd, "--no-suite-check"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    rows = [json.loads(x) for x in (tmp_path / "r" / "records.jsonl").read_text().splitlines()]
    assert not any(r["success"] for r in rows), rows  # never scored solved


def test_a_task_whose_draw_raises_is_no_task_without_a_solution(tmp_path):
    """Issue 57: the suite check took a task whose draw raised for one that states no solution
    (`suites --verify` exit 0, '12 state no solution, unchecked')."""
    plugin = tmp_path / "draw.py"
    plugin.write_text(
        PLUGIN.read_text().replace(DRAW, DRAW + "    if seed % 2:\n        raise KeyError('the draw')\n", 1)
    )
    done = _verify(plugin)
    flat = " ".join(done.stderr.split())
    assert done.returncode == 3 and "the draw of task 50001 raised KeyError" in flat and "draw.py:" in flat, flat


def test_a_success_check_that_never_returns_stops_at_the_suite_check_and_is_each_episodes_harness_error(tmp_path):
    """Issue 57: a plugin's success check that never returned hung the suite check and every
    episode, with no word. A plugin's check runs in a child process under the limit on external
    code: the suite check stops with exit 3 naming the check, its file and line; without it each
    episode is a harness error (exit 4), none scored."""
    source = PLUGIN.read_text()
    head = "def solved(shop: Shop, draft: TaskDraft) -> bool:\n"
    assert head in source
    plugin = tmp_path / "hang.py"
    plugin.write_text(source.replace(head, head + "    while True:  # the hang\n        pass\n", 1))
    line = next(i for i, text in enumerate(plugin.read_text().splitlines(), 1) if text == head.rstrip())
    env = {**os.environ, "REPAIR_HARNESS_COMPUTE_LIMIT_S": "2"}
    cmd = [sys.executable, "-m", "harness.cli", "suites", "shop-refunds", "--verify", "--plugin", str(plugin)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    flat = " ".join(done.stderr.split())
    assert done.returncode == 3 and "Traceback" not in flat, done.stdout + done.stderr
    said = f"the success check of suite 'shop-refunds' ({plugin}:{line}) did not return within 2 s"
    assert said in flat, flat
    cmd = [sys.executable, "-m", "harness.cli", "run", "--suite", "shop-refunds", "--plugin", str(plugin)]
    cmd += ["--model", "agent:gold", "--conditions", "raw", "--tasks", "2", "--out", str(tmp_path / "r")]
    done = subprocess.run([*cmd, "--no-suite-check"], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 4, done.stderr
    rows = [json.loads(x) for x in (tmp_path / "r" / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 2 and all(r["success"] is None and said in r["harness_error"] for r in rows), rows
