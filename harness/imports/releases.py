"""bfcl-eval releases other than the installed one, each in a folder of its own in a per-user cache.

A release is installed on first use with `pip install --no-deps --target`: BFCL's multi-turn
backends, data, checker and type table need only the standard library and mpmath (checked for every
module envs.bfcl imports, in releases 2025.6.8 to 2026.3.23), and its own pins (numpy, torch,
the model SDKs) would only cost time and disk. The folder is filled under a temporary name and
renamed whole, so an install that is killed leaves a dot-folder that never counts as installed.

The cache is `$REPAIR_HARNESS_BFCL_CACHE`, else `$XDG_CACHE_HOME/repair-harness/bfcl-eval`, else
`~/.cache/repair-harness/bfcl-eval`; a release is `<cache>/<version>/bfcl_eval`, whole only with its
package's `__init__.py` and a `bfcl_eval-<version>.dist-info` naming that release (a copy cut short,
or of another release, is named, never used). Every failure of the cache is one line naming the
path, the variable it came from and what to do.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from envs.errors import UserError
from harness.printable import printable

CACHE_ENV = "REPAIR_HARNESS_BFCL_CACHE"
# BFCL's dated release names; anything else never reaches pip's command line
_DATED = re.compile(r"^\d{4}\.\d{1,2}\.\d{1,2}(\.\d+)?$")
# the last release whose data files are BFCL_v3 (2025.8.25 brought BFCL_v4): auto tries a file's own first
LAST_V3 = "2025.8.6.2"
PIP_TIMEOUT_S = 600
INDEX_TIMEOUT_S = 120  # `pip index versions`: an index that never answers is given up on after this


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


def _from() -> str:
    """The variable the cache's path came from, as a line about the cache names it."""
    if os.environ.get(CACHE_ENV):
        return f"${CACHE_ENV}"
    return "$XDG_CACHE_HOME" if os.environ.get("XDG_CACHE_HOME") else f"$HOME; ${CACHE_ENV} sets another"


def _cache_folder() -> Path:
    """The cache, made where absent; a path that cannot be a folder is one line naming it."""
    root = cache()
    blocked = next((p for p in (root, *root.parents) if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise ReleaseUnavailable(
            f"the bfcl-eval cache {root} (from {_from()}) cannot be a folder: {blocked} is a file; "
            f"set ${CACHE_ENV} to a folder"
        )
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(root, exc) from None
    return root


def _unwritable(root: Path, exc: OSError) -> ReleaseUnavailable:
    return ReleaseUnavailable(
        f"the bfcl-eval cache {root} (from {_from()}) cannot be written: {exc.strerror or exc}; make it "
        f"writable, or set ${CACHE_ENV} to a folder you can write"
    )


def installed() -> str | None:
    """The bfcl-eval this interpreter imports (None: none); what a plain import replays on."""
    try:
        return metadata.version("bfcl-eval")
    except metadata.PackageNotFoundError:
        return None


def cached() -> list[str]:
    """The releases in the cache, oldest first (dot-folders are installs under way or killed)."""
    root = cache()
    try:
        names = [p.name for p in root.iterdir()] if root.is_dir() else []
    except OSError:  # a folder this user may not read: nothing cached that can be used
        names = []
    found = [n for n in names if _DATED.fullmatch(n) and n == _canonical(n) and whole(root / n, n) is None]
    return sorted(found, key=key)


def _canonical(version: str) -> str:
    """`2026.03.11` as `2026.3.11`: one release (pip reads them alike), one folder."""
    return ".".join(str(int(part)) for part in version.split("."))


def checked(version: str) -> str:
    """A dated release's name, canonical; anything else (`2026.3.11\\n` too) is one line."""
    if not _DATED.fullmatch(version):
        raise ReleaseUnavailable(f"--bfcl-version {version!r}: a bfcl-eval release is dated, e.g. 2025.6.8, or auto")
    return _canonical(version)


def whole(target: Path, version: str) -> str | None:
    """Why `target` is no whole copy of release `version`; None where it is one."""
    if not (target / "bfcl_eval" / "__init__.py").is_file():
        return "its bfcl_eval/ holds no package (an install or a copy cut short)"
    found = None
    for info in sorted(target.glob("bfcl_eval-*.dist-info")):
        try:
            text = (info / "METADATA").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found = next((line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("Version:")), None)
        if found:
            break
    if not found:
        return "it holds no bfcl_eval-*.dist-info naming its release"
    if not _DATED.fullmatch(found) or key(found) != key(version):
        return f"it holds bfcl-eval {found}"
    return None


def folder(version: str, say: Callable[[str], None] | None = None) -> Path:
    """The cached release's folder (to put first on sys.path), installed now when it is not there;
    `say` (else stderr) is told before an install starts, which may take minutes."""
    version = checked(version)
    root = cache()
    target = root / version
    if target.exists():
        why = whole(target, version)
        if why is None:
            return target
        raise ReleaseUnavailable(
            f"{target} is no whole bfcl-eval {version}: {why}; remove it and run again to install the release "
            f"there (the cache is from {_from()})"
        )
    root = _cache_folder()
    _clear_stale(root, version)
    try:
        partial = Path(tempfile.mkdtemp(prefix=f".{version}.", dir=root))
    except OSError as exc:
        raise _unwritable(root, exc) from None
    (say or _stderr)(
        f"installing bfcl-eval {version} into {target} (pip install --no-deps, from the package index; "
        f"at most {PIP_TIMEOUT_S} s)"
    )
    try:
        _pip_install(version, partial)
        try:
            partial.rename(target)
        except OSError:
            if whole(target, version) is not None:  # not another process that finished first
                raise
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target


def _stderr(line: str) -> None:
    sys.stderr.write(printable(line) + "\n")
    sys.stderr.flush()


def _clear_stale(root: Path, version: str) -> None:
    """Temporary folders of installs of `version` killed before they ended (20 MB each): one older
    than pip's timeout is no install still under way."""
    for p in root.glob(f".{version}.*"):
        try:
            if p.is_dir() and not p.is_symlink() and time.time() - p.stat().st_mtime > PIP_TIMEOUT_S + 60:
                shutil.rmtree(p, ignore_errors=True)
        except OSError:
            continue


def _pip_install(version: str, into: Path) -> None:
    command = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check"]
    command += ["--quiet", "--target", str(into), f"bfcl-eval=={version}", "mpmath"]
    why = None
    try:  # the cache may be a folder another user made: pip's own failure there is named below
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
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=INDEX_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
        for line in done.stdout.splitlines():
            if line.startswith("Available versions:"):
                names = [v.strip() for v in line.split(":", 1)[1].split(",")]
                return sorted((v for v in names if _DATED.fullmatch(v)), key=key)
    return None
