"""Plugins through the command line, as a user runs them: the example plugin's suite and condition,
provenance in run.json, a refused resume after the plugin changed, and the one-line failures.

Each command runs in a child process: a plugin registers into the process's registries, and a test
must not leave another test's names behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from envs.errors import UnknownName
from envs.registry import DuplicateName, Registry

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "plugins" / "shop_refunds.py"


def cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=300,
    )


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]


def test_the_registry_refuses_a_duplicate_and_names_an_unknown_one():
    r: Registry[int] = Registry("widget")
    r.register("a", 1)
    with pytest.raises(DuplicateName, match="widget 'a' is already registered"):
        r.register("a", 2)
    with pytest.raises(UnknownName, match="allowed: a"):
        r.get("b")
    assert r.source("a") == "built-in" and r.names() == ["a"]


def test_the_example_plugin_lists_plays_records_and_refuses_a_changed_source(tmp_path):
    plugin = tmp_path / "shop.py"
    shutil.copy(EXAMPLE, plugin)
    listed = cli("suites", "--plugin", str(plugin), cwd=tmp_path)
    assert listed.returncode == 0 and "shop-refunds" in listed.stdout and "plugin" in listed.stdout
    conditions = cli("conditions", "--plugin", str(plugin), "--format", "json", cwd=tmp_path)
    named = {c["name"]: c for c in json.loads(conditions.stdout)["conditions"]}
    assert named["shop_hint"]["source"] == f"plugin {plugin}" and named["raw"]["source"] == "built-in"
    out = tmp_path / "run"
    args = ["run", "--plugin", str(plugin), "--suite", "shop-refunds", "--model", "agent:gold,agent:reader"]
    args += ["--conditions", "raw,allowed_json,shop_hint", "--out", str(out)]
    done = cli(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = records(out)
    gold = [r for r in rows if r["model"] == "agent:gold"]
    assert len(gold) == 72 and all(r["success"] for r in gold) and not any(r["harness_error"] for r in rows)
    reader = {
        c: sum(r["success"] for r in rows if r["model"] == "agent:reader" and r["condition"] == c)
        for c in ("raw", "allowed_json")
    }
    assert reader["allowed_json"] == 24 > reader["raw"]  # the reader repairs what allowed_json lists
    (recorded,) = json.loads((out / "run.json").read_text())["plugins"]
    assert recorded["path"] == str(plugin.resolve()) and len(recorded["sha256"]) == 64
    before = (out / "records.jsonl").read_bytes()
    plugin.write_text(plugin.read_text() + "\n# a change\n")
    again = cli(*args, cwd=tmp_path)
    assert again.returncode == 2 and "Traceback" not in again.stderr
    assert str(plugin) in again.stderr and recorded["sha256"][:12] in again.stderr
    assert (out / "records.jsonl").read_bytes() == before


@pytest.mark.parametrize(
    "source, said",
    [
        ('raise RuntimeError("no database configured")\n', "failed to import: RuntimeError: no database configured"),
        ("def broken(:\n", "failed to import (line 1): SyntaxError"),
        (
            'from envs import register_suite\nregister_suite("bank-disputes", "x:y", 3, "again")\n',
            "suite 'bank-disputes' is already registered (by built-in)",
        ),
        # issue 57: exit 0 ended `run` with no word, exit 3 passed for a server failure
        ("raise SystemExit(0)\n", "failed to import: SystemExit: 0"),
        ("import sys\nsys.exit(3)\n", "failed to import: SystemExit: 3"),
    ],
    ids=["raises", "syntax", "duplicate", "exit-0", "exit-3"],
)
def test_a_plugin_that_cannot_load_is_one_line_and_exit_2(tmp_path, source, said):
    plugin = tmp_path / "bad.py"
    plugin.write_text(source)
    run = [
        "run",
        "--suite",
        "bank-disputes",
        "--model",
        "agent:gold",
        "--conditions",
        "raw",
        "--out",
        str(tmp_path / "r"),
    ]
    for args in (["suites"], run):
        done = cli(*args, "--plugin", str(plugin), cwd=tmp_path)
        lines = done.stderr.strip().splitlines()
        assert done.returncode == 2 and len(lines) == 1 and said in lines[0] and str(plugin) in lines[0], done.stderr
    assert not (tmp_path / "r").exists()


def test_an_installed_package_plugin_is_found_by_its_entry_point(tmp_path):
    """A distribution on the path that declares the entry-point group loads with no flag."""
    site = tmp_path / "site"
    (site / "paint_plugin").mkdir(parents=True)
    (site / "paint_plugin" / "__init__.py").write_text(
        "from conditions import register_condition\n"
        "def setup():\n"
        "    register_condition('paint_terse', 'code+location@json', 'the code and where, nothing else')\n"
    )
    info = site / "paint_plugin-1.2.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: paint-plugin\nVersion: 1.2.0\n")
    (info / "entry_points.txt").write_text("[repair_harness.plugins]\npaint = paint_plugin:setup\n")
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{site}"}
    listed = cli("conditions", "--format", "json", cwd=tmp_path, env=env)
    named = {c["name"]: c for c in json.loads(listed.stdout)["conditions"]}
    assert named["paint_terse"]["composition"] == "code+location@json"
    assert named["paint_terse"]["source"] == "plugin paint-plugin 1.2.0"
    out = tmp_path / "run"
    done = cli(
        "run",
        "--suite",
        "bank-disputes",
        "--tasks",
        "2",
        "--model",
        "agent:gold",
        "--conditions",
        "paint_terse",
        "--out",
        str(out),
        cwd=tmp_path,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    (recorded,) = json.loads((out / "run.json").read_text())["plugins"]
    assert recorded["distribution"] == "paint-plugin" and recorded["version"] == "1.2.0"


def test_a_clash_with_a_built_in_name_blames_no_plugin_for_the_built_in(tmp_path):
    """A plugin that is the first to import a built-in registry's module: the built-ins stay the
    built-ins' (the message once said 'already registered (by plugin ...)')."""
    import subprocess
    import sys

    plugin = tmp_path / "clash.py"
    plugin.write_text(
        "from harness.agents import ReferenceAgent, register_agent\n"
        "class Mine(ReferenceAgent):\n    kind = 'gold'\n"
        "register_agent('agent:gold', Mine)\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "suites", "--plugin", str(plugin)], capture_output=True, text=True
    )
    assert done.returncode == 2 and "already registered (by built-in)" in done.stderr, done.stderr


def test_what_a_plugin_prints_at_import_never_reaches_a_commands_stdout(tmp_path):
    """Issue 57: a plugin's import-time print landed in `report --format json`'s stdout, which
    programs read: it goes to stderr."""
    run = tmp_path / "r"
    done = cli(
        "run",
        "--suite",
        "bank-disputes",
        "--model",
        "agent:gold",
        "--conditions",
        "raw",
        "--tasks",
        "1",
        "--out",
        str(run),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    plugin = tmp_path / "chatty.py"
    plugin.write_text('print("hello from the plugin")\n')
    done = cli("report", str(run), "--format", "json", "--plugin", str(plugin), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    json.loads(done.stdout)  # stdout is the report alone
    assert "hello from the plugin" in done.stderr
