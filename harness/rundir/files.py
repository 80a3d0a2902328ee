"""The files of a run directory, written whole: JSON text that always encodes, a file replaced
atomically, and a full disk told apart from other write failures (`harness.rundir.store` writes them)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from envs.errors import UserError
from harness.errors import StorageError
from harness.rundir.targets import kind


def to_json(obj: Any, **kwargs: Any) -> str:
    """JSON text that always encodes as UTF-8: lone surrogates fall back to \\u escapes (lossless)."""
    text = json.dumps(obj, ensure_ascii=False, default=str, **kwargs)
    return text if _utf8(text) else json.dumps(obj, ensure_ascii=True, default=str, **kwargs)


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return True


_LIKE_DEFAULT_STR = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def compact_json(obj: Any) -> str | None:
    """`json.dumps(obj, ensure_ascii=False, default=str, separators=(",", ":"))`, by orjson in a
    tenth of the time (what json would hand to `str`, datetimes and dataclasses, orjson hands to
    `str` too); None where orjson refuses: a lone surrogate, an integer beyond 64 bits. orjson
    writes NaN as null where json writes NaN: records and transcripts are pydantic's JSON-mode
    dumps, which already write NaN as null (a model's `{"x": NaN}` included)."""
    try:
        return orjson.dumps(obj, default=str, option=_LIKE_DEFAULT_STR).decode()
    except TypeError:
        return None


# a write that fails with one of these will fail again for every episode: the run stops
STORAGE_ERRNOS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EFBIG,
    errno.EIO,
    errno.EROFS,
    errno.EPERM,  # an immutable file (chattr +i)
    errno.EACCES,  # a file or folder this user may not write
}


def storage_error(exc: OSError, path: Path) -> StorageError:
    name = errno.errorcode.get(exc.errno or 0, "")
    return StorageError(
        f"cannot write {path}: {exc.strerror or exc}{f' ({name})' if name else ''}. Every record written before "
        "is kept and no line is left half-written: free space, then run the same command again to resume"
    )


def replace_file(path: Path, data: bytes, durable: bool = False, entry: bool = True) -> None:
    """Write beside, then rename: a reader never sees half a file. A full disk is a StorageError.
    `durable`: the data is on the disk before the rename (a power cut leaves the old file or the
    new one, never an empty one), and with `entry` the rename too before this returns.

    Four system calls (open, write, close, rename) where a durable write made through a file object
    and os.fsync took nine: a transcript is written this way per episode by the run's writer
    thread, which wants the GIL back after each call while the event loop holds it (ten context
    switches an episode; benchmarks/cpu_per_call.py)."""
    tmp = path.with_suffix(".tmp")
    # O_DSYNC: each write returns with its data (and the size that reads it back) on the disk, as
    # fdatasync after it would; where the platform has none, an fsync does it
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | (_DSYNC if durable else 0)
    try:
        try:
            # O_EXCL: a file or a link left there (a killed writer, or planted) is never written through
            fd = os.open(tmp, flags, 0o644)
        except FileExistsError:
            tmp.unlink()
            fd = os.open(tmp, flags, 0o644)  # a link planted between the unlink and here fails here
        try:
            view = memoryview(data)
            while view:  # a short write (a disk filling up) is continued, or fails
                view = view[os.write(fd, view) :]
            if durable and not _DSYNC:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        if durable and entry:
            sync_dir(path.parent)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if exc.errno in STORAGE_ERRNOS:
            raise storage_error(exc, path) from None
        raise


_DSYNC = getattr(os, "O_DSYNC", 0)


def sync_dir(folder: Path) -> None:
    """A directory's entries (a rename, a new file) on the disk."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


# a write that fails with one of these failed on the path the user named, not on the disk: a name
# too long for the filesystem (one part over 255 bytes, or the whole over PATH_MAX), a file where a
# folder must be (or the other way), a folder that cannot be made there (/proc), a link loop. The
# same path fails again however much space is freed, so it is bad input (exit 2), not a stop (exit 1).
PATH_ERRNOS = {errno.ENAMETOOLONG, errno.ENOTDIR, errno.EEXIST, errno.EISDIR, errno.ENOENT, errno.ELOOP}


@contextlib.contextmanager
def storage_guard(path: Path) -> Iterator[None]:
    """A full disk, or a path this user may not write, met while writing `path`: a StorageError.
    A path that cannot be written as named (PATH_ERRNOS): a UserError naming it."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in STORAGE_ERRNOS | PATH_ERRNOS:
            raise
        name = errno.errorcode.get(exc.errno or 0, "")
        why = f"{exc.strerror or exc}{f' ({name})' if name else ''}"
        if exc.errno in PATH_ERRNOS:
            # the path the OS refused, which may be a folder above `path` (the one that is a file)
            where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(path) else ""
            raise UserError(f"cannot write {path}{where}: {why}; name another path") from None
        raise StorageError(
            f"cannot write {path}: {why}; nothing was left half-written: free space (or pick another path), "
            "then run it again"
        ) from None


@contextlib.contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """A file an export writes (a Parquet file, a figure, a log), in full or not at all: the block
    writes the temporary path given, renamed onto `path` when it ends; on any failure the partial
    file is removed, and a full disk or a file this user may not write is a StorageError."""
    tmp = path.with_name(path.name + ".part")
    with storage_guard(path):
        try:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()  # a file or a link left there (a killed export, or planted): never written through
            yield tmp
            there = kind(path)  # checked before the export began; a rename replaces whatever came since
            if there:
                raise UserError(f"cannot write {path}: it is {there} now; nothing was written")
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
