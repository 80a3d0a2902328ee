"""The suite check is paid once (harness.suite_check_cache): a passing verdict is kept per suite,
options, tasks, settings, plugin and code, and a second check of all of the same plays nothing;
any change plays every task again, and a failing check is never kept."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path

import pytest

from harness import suite_check, suite_check_cache
from harness.episodes import select_tasks
from harness.errors import SuiteCheckFailed
from harness.spec import build_spec, resolved
from tests.registries import no_plugin_left  # noqa: F401  (autouse: each test's plugins are gone after it)

PLUGIN = Path(__file__).parents[2] / "examples" / "plugins" / "shop_refunds.py"


@pytest.fixture
def played(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The tasks gold played, in order, with the cache in a folder of the test's own."""
    monkeypatch.setenv("REPAIR_HARNESS_CACHE", str(tmp_path / "cache"))
    tasks: list[str] = []
    real = suite_check.run_episode

    async def counted(env, player, ctx):
        tasks.append(type(env).__name__)
        return await real(env, player, ctx)

    monkeypatch.setattr(suite_check, "run_episode", counted)
    return tasks


def _check(**spec: object) -> suite_check.Verdict:
    plan = resolved(build_spec({"suite": "bank-disputes", "models": ["agent:gold"], "conditions": ["raw"], **spec}))
    return asyncio.run(suite_check.check_suite(plan, select_tasks(plan)))


def test_a_second_check_of_the_same_grid_plays_nothing(played):
    first = _check(tasks=6)
    assert len(played) == 6 and not first.cached
    again = _check(tasks=6, conditions=["raw", "allowed_json"], models=["agent:gold", "agent:reader"])
    assert len(played) == 6 and again.cached  # other arms, the same check
    assert (again.tasks, again.unchecked) == (first.tasks, first.unchecked)


@pytest.mark.parametrize(
    "changed",
    [{"tasks": 5}, {"budgets": [9]}, {"tool_mode": "native"}, {"decoding": {"temperature": 0.5}}],
    ids=["task set", "budget", "tool mode", "decoding"],
)
def test_any_change_checks_every_task_again(played, changed):
    _check(tasks=6)
    before = len(played)
    verdict = _check(**{"tasks": 6, **changed})
    assert not verdict.cached and len(played) == before + verdict.tasks


def test_a_change_of_the_code_checks_again(played, monkeypatch):
    _check(tasks=3)
    monkeypatch.setattr(suite_check_cache, "code_hash", lambda: "another commit")
    assert not _check(tasks=3).cached and len(played) == 6


def test_a_changed_plugin_is_another_key(played, tmp_path):
    plugin = tmp_path / "shop.py"
    plugin.write_text(PLUGIN.read_text())
    grid = {"suite": "shop-refunds", "tasks": 4, "plugins": [str(plugin)]}
    assert not _check(**grid).cached
    assert _check(**grid).cached and len(played) == 4
    plan = resolved(build_spec({"models": ["agent:gold"], "conditions": ["raw"], **grid}))
    tasks = select_tasks(plan)
    same = suite_check_cache.key(plan, tasks, "raw", 4)
    ours = next(i for i, p in enumerate(plan.plugins) if p.path == str(plugin.resolve()))
    plan.plugins[ours] = dataclasses.replace(plan.plugins[ours], sha256="another source")
    assert suite_check_cache.key(plan, tasks, "raw", 4) != same


def test_a_failing_check_is_never_kept(played, monkeypatch, tmp_path):
    real = suite_check.run_episode

    async def lost(env, player, ctx):
        return dataclasses.replace(await real(env, player, ctx), won=False)

    monkeypatch.setattr(suite_check, "run_episode", lost)
    for _ in range(2):
        with pytest.raises(SuiteCheckFailed):
            _check(tasks=2)
    assert not list((tmp_path / "cache").rglob("*.json"))


def test_an_unreadable_verdict_is_checked_again(played, tmp_path):
    _check(tasks=2)
    for kept in (tmp_path / "cache" / "suite-checks").glob("*.json"):
        kept.write_text("{not json")
    assert not _check(tasks=2).cached and len(played) == 4
    kept_now = [json.loads(p.read_text()) for p in (tmp_path / "cache" / "suite-checks").glob("*.json")]
    assert kept_now and all(k["tasks"] == 2 for k in kept_now)


def test_verify_plays_every_time(played):
    suite_check.verify_text("bank-disputes", [])
    n = len(played)
    suite_check.verify_text("bank-disputes", [])
    assert n > 0 and len(played) == 2 * n
