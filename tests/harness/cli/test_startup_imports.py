"""Listing and help import no model SDK, HTTP client, game generator or analysis stack, and none of
our pydantic models, specs or backends; `--help` imports neither pydantic nor rich.

typer (0.26 and later) validates the value of every parameter it processes with a pydantic
TypeAdapter, built on first use: any command it runs (not `--help` of the top level) imports
pydantic through typer. Where pydantic is imported, the first module to import it must be typer's.

(Their speed is measured by benchmarks/startup.py, not here.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# third-party packages none of these paths may import
HEAVY = (
    "openai",
    "httpx",
    "httpx2",
    "aiohttp",
    "textworld",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "matplotlib",
    "llama_cpp",
    "vllm",
    "torch",
    "inspect_ai",
)
# our own modules that bring pydantic models, the spec machinery, model backends, games or analysis
OURS = (
    "envs.contract",
    "envs.tools",
    "envs.textworld.suite",
    "harness.types",
    "harness.run_spec",
    "harness.spec",
    "harness.runner",
    "harness.serving.models",
    "harness.agents",
    "harness.serving.llama.local",
    "harness.serving.server_proc",
    "harness.serving.vllm.presets",
    "harness.serving.backends.openai_compat",
    "harness.readers.inspect_log",
    "harness.readers.inspect_messages",
    "results",
)
# the entry-point scan of every installed distribution: with no package plugin on the path (this
# checkout's environment has none), listing never imports it (harness.plugins._may_declare)
SCAN = ("importlib.metadata",)
# `conditions` lists the condition registry: only that command imports it, and it builds none of
# the contract's pydantic models (a condition receives a Violation, it never builds one)
PATHS: dict[str, dict[str, tuple[str, ...]]] = {
    "--help": {"forbidden": HEAVY + SCAN + ("pydantic", "rich"), "ours": OURS + ("conditions",)},
    "suites": {"forbidden": HEAVY + SCAN, "ours": OURS + ("conditions",)},
    "conditions": {"forbidden": HEAVY + SCAN, "ours": OURS},
}

PROBE = """
import json, sys

first_importer = {}  # top-level package -> the module whose import statement first loaded it


class Watch:
    def find_spec(self, name, path=None, target=None):
        if "." not in name and name not in first_importer:
            frame = sys._getframe(1)
            while frame and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib")):
                frame = frame.f_back
            first_importer[name] = frame.f_globals.get("__name__") if frame else None
        return None


sys.meta_path.insert(0, Watch())
sys.argv = ["repair-harness", *sys.argv[1:]]
from harness.cli import app
try:
    app()
except SystemExit as e:
    assert not e.code, e.code
print(json.dumps({"modules": sorted(sys.modules), "first_importer": first_importer}))
"""


def _imports(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "120"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _loaded(modules: list[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.mark.parametrize("args", [["--help"], ["suites"], ["conditions"]])
def test_listing_and_help_stay_light(args: list[str]) -> None:
    seen = _imports(args)
    rules = PATHS[args[0]]
    assert _loaded(seen["modules"], rules["forbidden"]) == []
    assert _loaded(seen["modules"], rules["ours"]) == []
    if "pydantic" in seen["modules"]:
        assert seen["first_importer"]["pydantic"].startswith("typer."), seen["first_importer"]["pydantic"]


def test_the_probe_sees_heavy_imports_and_who_made_them() -> None:
    """The checks above can fail: `suites NAME` reads the suite's pydantic options model, and the
    listing's table is the first import of rich."""
    seen = _imports(["suites", "tools-travel"])
    assert _loaded(seen["modules"], OURS) and "envs.tools" in seen["modules"]
    assert seen["first_importer"]["rich"] == "harness.cli.listing"


def test_the_run_directory_store_imports_no_analysis_stack() -> None:
    """`run` opens its run directory through harness.rundir.store, which asks results.rundir for the
    layout: that import must not bring results' analysis (pandas, scipy, statsmodels)."""
    code = "import json, sys, harness.rundir.store; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    modules = json.loads(out.stdout.strip().splitlines()[-1])
    assert "results.rundir" in modules
    assert _loaded(modules, ("pandas", "scipy", "statsmodels", "matplotlib", "results.load")) == []
