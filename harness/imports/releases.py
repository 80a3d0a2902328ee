"""bfcl-eval releases other than the installed one, each in a folder of its own in a per-user cache.

A release is installed on first use with `pip install --no-deps --target`: BFCL's multi-turn
backends, data, checker and type table need only the standard library and mpmath (checked for every
module envs.bfcl imports, in releases 2025.6.8 to 2026.3.23), and its own pins (numpy, torch,
the model SDKs) would only cost time and disk. The folder is filled under a temporary name and
renamed whole, so an install that is killed leaves a dot-folder that never counts as installed.

The cache is `$REPAIR_HARNESS_BFCL_CACHE`, else `$XDG_CACHE_HOME/repair-harness/bfcl-eval`, else
`~/.cache/repair-harness/bfcl-eval`; a release is `<cache>/<version>/bfcl_eval`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from envs.errors import UserError

CACHE_ENV = "REPAIR_HARNESS_BFCL_CACHE"
# BFCL's dated release names; anything else never reaches pip's command line
_DATED = re.compile(r"^\d{4}\.\d{1,2}\.\d{1,2}(\.\d+)?$")
# the last release whose data files are BFCL_v3 (2025.8.25 brought BFCL_v4): auto tries a file's own first
LAST_V3 = "2025.8.6.2"
PIP_TIMEOUT_S = 600


class ReleaseUnavailable(UserError):
    """A release that is neither cached nor installable (offline, not on the index, no pip)."""


def key(version: str) -> tuple[int, ...]:
    """A dated version as numbers, for ordering (`2025.6.30.1` after `2025.6.30`)."""
    return tuple(int(part) for part in version.split("."))


def data_series(version: str) -> str:
    """The data files' prefix a release holds, from its date (`BFCL_v3`, `BFCL_v4`)."""
    return "BFCL_v3" if key(version) <= key(LAST_V3) else "BFCL_v4"


def cache() -> Path:
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "repair-harness" / "bfcl-eval"


def installed() -> str | None:
    """The bfcl-eval this interpreter imports (None: none); what a plain import replays on."""
    try:
        return metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError:
        return None


def cached() -> list[str]:
    """The releases in the cache, oldest first (dot-folders are installs under way or killed)."""
    root = cache()
    found = (
        [p.name for p in root.iterdir() if _DATED.match(p.name) and (p / "bfcl_eval").is_dir()] if root.is_dir() else []
    )
    return sorted(found, key=key)


def checked(version: str) -> str:
    if not _DATED.match(version):
        raise ReleaseUnavailable(f"--bfcl-version {version!r}: a bfcl-eval release is dated, e.g. 2025.6.8, or auto")
    return version


def folder(version: str) -> Path:
    """The cached release's folder (to put first on sys.path), installed now when it is not there."""
    target = cache() / checked(version)
    if (target / "bfcl_eval").is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{version}.", dir=target.parent))
    try:
        _pip_install(version, partial)
        try:
            partial.rename(target)
        except OSError:
            if not (target / "bfcl_eval").is_dir():  # not another process that finished first
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _pip_install(version: str, into: Path) -> None:
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check"]
    command += ["--quiet", "--target", str(into), f"bfcl-eval=={version}", "mpmath"]
    why = None
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        why = f"pip did not finish in {PIP_TIMEOUT_S} s"
    else:
        if done.returncode != 0:
            errors = [line.strip() for line in done.stderr.splitlines() if line.strip().startswith("ERROR")]
            why = (errors or done.stderr.strip().splitlines()[-1:] or [f"pip exited {done.returncode}"])[0]
        elif not (into / "bfcl_eval").is_dir():
            why = "pip installed no bfcl_eval package"
    if why is not None:
        raise ReleaseUnavailable(
            f"bfcl-eval {version} is not in {cache()} and cannot be installed there ({why}); offline, copy "
            f"a folder made by `pip install --no-deps --target DIR bfcl-eval=={version} mpmath` to {cache() / version}"
        )


def listed() -> list[str] | None:
    """The dated releases on the package index, oldest first; None when the index cannot be read."""
    command = [sys.executable, "-m", "pip", "index", "versions", "bfcl-eval", "--disable-pip-version-check"]
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
        for line in done.stdout.splitlines():
            if line.startswith("Available versions:"):
                names = [v.strip() for v in line.split(":", 1)[1].split(",")]
                return sorted((v for v in names if _DATED.match(v)), key=key)
    return None
