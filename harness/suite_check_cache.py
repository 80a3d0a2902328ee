"""The suite check's verdicts, kept: a check that passed is not played again for the same suite,
options, tasks, settings and code (issue 67: half a millisecond a task, paid on every run of a grid).

A verdict is stored under a key that hashes everything the check's outcome depends on: the suite,
its options, each task (id and parameters), the tool mode, decoding, budget and the condition gold
plays under, the bounds on external code (REPAIR_HARNESS_COMPUTE_*), the source of the project's
packages (every file of `conditions`, `envs`, `harness`, `results`), each plugin loaded (where it
came from, its version and the sha256 of its source), and the Python and library versions the
suites run on. Any change is another key, so the first run
after it checks everything again. Only a passing verdict is kept: a failed check raises, every time.

Where: `$REPAIR_HARNESS_CACHE/suite-checks/KEY.json`, else `~/.cache/repair-harness/suite-checks/`
(the cache of the TextWorld games and GGUF conversions), shared by every run and shard of this
user. Deleting the folder only makes the next run check again. A verdict that cannot be read is
ignored and one that cannot be written is not kept: the cache saves time, never decides.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
import tempfile
from importlib import metadata
from pathlib import Path
from typing import Any

from envs.contract import Task
from harness.spec import Resolved

PACKAGES = ("conditions", "envs", "harness", "results")
# libraries whose behaviour a suite's outcome depends on (the gold path, BFCL's backends and checker)
LIBRARIES = ("pydantic", "textworld", "bfcl-eval")
FOLDER = "suite-checks"
LIMITS = ("REPAIR_HARNESS_COMPUTE_LIMIT_S", "REPAIR_HARNESS_COMPUTE_MEMORY_MIB")


def cache_dir() -> Path:
    root = os.environ.get("REPAIR_HARNESS_CACHE")
    return (Path(root) if root else Path.home() / ".cache" / "repair-harness") / FOLDER


@functools.cache
def code_hash() -> str:
    """The sha256 of every file of the project's packages (8 ms for 1.4 MB here)."""
    root = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*")):
            if "__pycache__" in path.parts or not path.is_file():
                continue
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def key(plan: Resolved, tasks: list[Task], condition: str, budget: int) -> str:
    """The hash a verdict is kept under (see the module docstring)."""
    spec = plan.spec
    what: dict[str, Any] = {
        "suite": spec.suite,
        "options": plan.options.model_dump(mode="json"),
        "tasks": [[t.task_id, t.params] for t in tasks],
        "tool_mode": str(spec.tool_mode),
        "decoding": spec.decoding.model_dump(mode="json"),
        "condition": condition,
        "budget": budget,
        "code": code_hash(),
        "plugins": [p.record() for p in plan.plugins],
        "python": platform.python_version(),
        # the bounds on external code: a check that passed under wider ones may not under these
        "limits": {name: os.environ.get(name) for name in LIMITS},
        "libraries": {name: _version(name) for name in LIBRARIES},
    }
    text = json.dumps(what, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def recall(digest: str) -> dict[str, Any] | None:
    """The verdict kept under `digest`, or None (none kept, or unreadable: the check runs)."""
    try:
        verdict = json.loads((cache_dir() / f"{digest}.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    ok = isinstance(verdict, dict) and all(isinstance(verdict.get(k), int) for k in ("tasks", "unchecked"))
    return verdict if ok else None


def keep(digest: str, verdict: dict[str, Any]) -> None:
    """Store a passing verdict (written beside its name and renamed: never read half-written)."""
    folder = cache_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".tmp", delete=False, encoding="utf-8") as f:
            json.dump(verdict, f)
        os.replace(f.name, folder / f"{digest}.json")
    except OSError:
        pass  # not kept: the next run checks again
