"""Where a command may write what it made (an export, a figure, a log): never into a run directory
it reads, never onto what is not a regular file.

An export renames its finished file onto the path named (`written_whole`), and a rename replaces
whatever is there: `export r --parquet r/records.jsonl` would replace the run's records with a
Parquet file, `--parquet /dev/null` run as root the system's /dev/null, a FIFO or a link would
become a plain file. Each is refused before anything is read or written, in one line (exit 2).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from envs.errors import UserError

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def kind(path: Path) -> str | None:
    """What is at `path` when it is not a regular file (the link itself, never what it points at);
    None for a regular file or nothing."""
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError:  # a name too long, a loop: the write names it (storage_guard)
        return None
    return next((name for test, name in _KINDS if test(mode)), None)


def _real(path: Path) -> Path:
    """The path as the OS will reach it, its last part not followed (a link there is refused apart)."""
    return Path(os.path.realpath(path.parent)) / path.name


def _runs_read(reads: Iterable[Path]) -> list[Path]:
    """The run directories behind what a command reads (a records.jsonl named stands for its folder)."""
    out = []
    for p in reads:
        real = Path(os.path.realpath(p))
        out.append(real.parent if real.is_file() else real)
    return out


def _inside(real: Path, runs: Sequence[Path]) -> Path | None:
    return next((run for run in runs if real == run or run in real.parents), None)


def check_file(path: Path, reads: Iterable[Path], option: str) -> None:
    """`path`, a file a command will write, is refused (UserError) where it is inside a run
    directory the command reads or where something not a regular file is there."""
    what = kind(path)
    if what:
        raise UserError(
            f"{option} {path}: it is {what}, which the export would replace with a file; "
            "name a new file or a regular one (nothing was written)"
        )
    run = _inside(_real(path), _runs_read(reads))
    if run:
        raise UserError(
            f"{option} {path}: it is inside the run directory {run}, which this command reads, and would "
            "overwrite or mix with its files; name a path outside it (nothing was written)"
        )


def check_folder(folder: Path, reads: Iterable[Path], option: str, names: Iterable[str] = ()) -> None:
    """`folder`, where a command writes files (`names` among them, when known), is refused where it
    is inside a run directory the command reads, or where one of those files is not a regular one."""
    runs = _runs_read(reads)
    run = _inside(Path(os.path.realpath(folder)), runs)
    if run:
        raise UserError(
            f"{option} {folder}: it is inside the run directory {run}, which this command reads; "
            "name a folder outside it (nothing was written)"
        )
    for name in names:
        what = kind(folder / name)
        if what:
            raise UserError(
                f"{option} {folder}: its {name} is {what}, which would be replaced with a file; "
                "remove it or name another folder (nothing was written)"
            )
