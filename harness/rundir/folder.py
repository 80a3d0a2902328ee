"""A run directory's folders and its lock (`harness.rundir.store.RunDir.open`): made when a run opens it,
taken back by a run that never started, so that a failed start leaves nothing that looks like a
run or blocks the corrected command."""

from __future__ import annotations

import errno
import fcntl
import os
from pathlib import Path

from envs.errors import UserError
from harness.rundir.files import STORAGE_ERRNOS, storage_error
from results import rundir


class RunDirError(UserError):
    """The run directory cannot take this run (another spec's records are there, another process
    holds it, it is not a writable directory, or its records are damaged)."""


def make_dirs(path: Path, transcripts: Path) -> list[Path]:
    """Make the run directory and its transcripts/; the folders that did not exist, outermost first."""
    if path.exists() and not path.is_dir():
        raise RunDirError(f"--out {path} is a file, not a directory; name a directory")
    absent = [
        p for p in (*reversed(path.absolute().parents), path.absolute(), transcripts.absolute()) if not p.exists()
    ]
    try:
        transcripts.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunDirError(f"cannot create the run directory {path}: {exc.strerror or exc}") from None
    if not os.access(path, os.W_OK) or not os.access(transcripts, os.W_OK):
        raise RunDirError(f"the run directory {path} is not writable")
    return absent


def refuse_links(path: Path) -> None:
    """A run directory's own files are plain files (its folders folders), never links: a link
    planted there would have the run write over, or append to, whatever it names. Records whose
    run.json is gone take no more records: the spec they were played under is unknown."""
    records, meta, transcripts = rundir.records_file(path), rundir.meta_file(path), rundir.transcripts_dir(path)
    for p in (records, meta, rundir.errors_file(path), transcripts, rundir.lock_file(path)):
        if p.is_symlink():
            raise RunDirError(f"{p} is a symbolic link, which a run directory never follows: remove it")
        # a folder or a FIFO (whose open would wait forever): never read, appended to or replaced
        if p != transcripts and (kind := rundir.not_regular(p)):
            raise RunDirError(f"{p} is {kind} where the run keeps a file: move it away")
    if records.exists() and records.stat().st_size and not meta.exists():
        raise RunDirError(
            f"{path} holds records but no {rundir.META}: the spec they were played under is unknown, "
            f"so nothing may be added to them; restore {rundir.META}, or use another --out"
        )


def take_lock(path: Path, created: list[Path]) -> int:
    """The run directory's lock, held (flock: the kernel drops it when the holder dies) and naming
    this process; the lock file joins `created` when this made it."""
    lock = rundir.lock_file(path)
    if not lock.exists():
        created.append(lock.absolute())
    try:  # never through a link planted there: the "lock" would truncate whatever it points to
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise RunDirError(f"{lock} cannot be the run's lock ({not_followed(exc)}); remove it") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise RunDirError(
            f"{path} is in use by another run (pid {holder}); wait for it to finish or use another --out"
        ) from None
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
    except OSError as exc:  # a disk already full: nothing of this run is left behind
        os.close(fd)
        remove_created(created)
        if exc.errno in STORAGE_ERRNOS:
            raise storage_error(exc, lock) from None
        raise
    return fd


def not_followed(exc: OSError) -> str:
    """What an O_NOFOLLOW open's error means: ELOOP is a symbolic link it refused to follow."""
    return "a symbolic link, which a run directory never follows" if exc.errno == errno.ELOOP else str(exc)


def remove_created(created: list[Path]) -> None:
    """A run that never started (no server, a wrong model name) takes back what `open` made, while
    it still holds the lock: no `.lock` or empty transcripts/ is left that looks like a run. A
    folder that now holds anything else is kept."""
    for path in reversed(created):
        try:
            path.unlink() if path.name == rundir.LOCK else path.rmdir()
        except OSError:
            pass  # not empty (someone else's file), or already gone
