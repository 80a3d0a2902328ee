"""The game cache: one directory per generated game, keyed by its generation parameters.

Layout: `<root>/tw<textworld version>/<r3-o4-q2>/<seed>/{game.z8,game.json,game.ni,entry.json}`.
`entry.json` is written last and carries the files' hashes, so a directory whose entry is missing,
unreadable or does not match its files is a broken game: it is deleted and generated again.
Generation runs in a child process (fixed PYTHONHASHSEED) into a temporary directory that is
renamed into place, so an interrupted build never leaves a half-written game behind.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path

from pydantic import ValidationError

from envs.textworld.errors import GameGenerationError
from envs.textworld.generate import STORY_NAME, sha256_file, sha256_game_json
from envs.textworld.manifest import PYTHONHASHSEED, GameEntry, GenParams

GEN_TIMEOUT_S = 600
_REPO_ROOT = Path(__file__).resolve().parents[2]
# a game's directory -> the (mtime, size) of its three files when they were last verified, and its entry
_verified: dict[str, tuple[tuple[tuple[int, int], ...], GameEntry]] = {}
_verified_lock = threading.Lock()


@dataclass(frozen=True)
class GameFiles:
    dir: Path

    @property
    def z8(self) -> Path:
        return self.dir / f"{STORY_NAME}.z8"

    @property
    def json(self) -> Path:
        return self.dir / f"{STORY_NAME}.json"

    @property
    def entry(self) -> Path:
        return self.dir / "entry.json"


def game_files(root: Path, params: GenParams) -> GameFiles:
    return GameFiles(Path(root) / f"tw{version('textworld')}" / params.slug / str(params.seed))


def load_cached(root: Path, params: GenParams) -> GameEntry | None:
    """The cached game's entry if it is complete and its files match their hashes, else None."""
    files = game_files(root, params)
    try:
        stamp = tuple((p.stat().st_mtime_ns, p.stat().st_size) for p in (files.entry, files.z8, files.json))
    except OSError:
        return None
    key = str(files.dir)
    with _verified_lock:
        hit = _verified.get(key)
    if hit and hit[0] == stamp:
        return hit[1]
    try:
        entry = GameEntry.model_validate_json(files.entry.read_text())
    except (OSError, ValueError, ValidationError):
        return None
    try:
        intact = entry.sha256 == sha256_file(files.z8) and entry.json_sha256 == sha256_game_json(files.json)
    except (OSError, ValueError):  # a game .json that no longer parses is corrupt too
        return None
    if entry.params() != params or not intact:
        return None
    with _verified_lock:
        _verified[key] = (stamp, entry)
    return entry


def _child_env() -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED=PYTHONHASHSEED)
    # the child imports this package, installed or not
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_REPO_ROOT), env.get("PYTHONPATH", "")) if p)
    return env


def generate(root: Path, params: GenParams, timeout_s: float = GEN_TIMEOUT_S) -> GameEntry:
    """Generate one game into the cache (replacing a broken one) and return its entry."""
    files = game_files(root, params)
    files.dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{params.seed}-", dir=files.dir.parent))
    cmd = [
        sys.executable,
        "-m",
        "envs.textworld.generate",
        "--seed",
        str(params.seed),
        "--rooms",
        str(params.rooms),
        "--objects",
        str(params.objects),
        "--quest-length",
        str(params.quest_length),
        "--dest",
        str(tmp),
    ]
    try:
        try:
            done = subprocess.run(cmd, cwd=tmp, env=_child_env(), capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise GameGenerationError(
                f"generating TextWorld game seed {params.seed} ({params.slug}) took over {timeout_s:.0f} s"
            ) from exc
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip()[-2000:]
            raise GameGenerationError(
                f"could not generate TextWorld game seed {params.seed} ({params.slug}): exit {done.returncode}\n{tail}"
            )
        tmp.chmod(0o755)  # mkdtemp made it private; the cache may be shared
        if files.dir.exists():
            shutil.rmtree(files.dir)
        try:
            tmp.rename(files.dir)
        except OSError:
            # another process finished the same game first; keep theirs if it is sound
            if load_cached(root, params) is None:
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    entry = load_cached(root, params)
    if entry is None:
        raise GameGenerationError(
            f"TextWorld game seed {params.seed} ({params.slug}) was generated but does not verify"
        )
    return entry


def ensure(root: Path, params: GenParams) -> tuple[GameEntry, GameFiles]:
    """The game from the cache, generated first if it is missing or broken."""
    entry = load_cached(root, params) or generate(root, params)
    return entry, game_files(root, params)


def build(
    root: Path,
    params: list[GenParams],
    jobs: int | None = None,
    on_done: Callable[[GameEntry, bool], None] | None = None,
) -> list[GameEntry]:
    """Every game of `params`, in that order; missing ones are generated `jobs` at a time.
    `on_done(entry, generated)` is called as each game becomes available."""
    entries: dict[GenParams, GameEntry] = {}
    missing = []
    for p in params:
        hit = load_cached(root, p)
        if hit is None:
            missing.append(p)
        else:
            entries[p] = hit
            if on_done:
                on_done(hit, False)
    if missing:
        workers = max(1, min(len(missing), jobs or os.cpu_count() or 1))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {pool.submit(generate, root, p): p for p in missing}
            errors = []
            for fut in as_completed(futures):
                p = futures[fut]
                try:
                    entries[p] = fut.result()
                    if on_done:
                        on_done(entries[p], True)
                except GameGenerationError as exc:
                    errors.append(str(exc))
            if errors:
                raise GameGenerationError("\n".join(errors))
    return [entries[p] for p in params]
