"""The layout of a run directory, spelled once: its files, their paths, what counts as a run
directory, and the one reader of records.jsonl's lines.

    RUN_DIR/records.jsonl         one JSON line per finished episode (appended, fsynced)
    RUN_DIR/harness_errors.jsonl  harness-error records moved aside by `--retry-errors`
    RUN_DIR/run.json              the spec, its identity hash, the run id, one entry per session
    RUN_DIR/transcripts/SLUG.json one episode's conversation (a record names it, relative)
    RUN_DIR/.lock                 held by the run playing into it (flock: the kernel drops it on a kill)
    FOLDER/plan.json              the runs a command that plays several (demo) planned in FOLDER

The harness writes these files (`harness.rundir.store`), `results` reads them: both ask this module,
which imports neither pandas nor the harness (`harness.rundir.store` imports it when `run` starts).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from results.columns import KEY_FIELDS, C
from results.errors import RecordsError

RECORDS = "records.jsonl"
ERRORS = "harness_errors.jsonl"
META = "run.json"
TRANSCRIPTS = "transcripts"
LOCK = ".lock"
PLAN = "plan.json"

PathLike = str | Path


def records_file(run_dir: PathLike) -> Path:
    return Path(run_dir) / RECORDS


def errors_file(run_dir: PathLike) -> Path:
    return Path(run_dir) / ERRORS


def meta_file(run_dir: PathLike) -> Path:
    return Path(run_dir) / META


def transcripts_dir(run_dir: PathLike) -> Path:
    return Path(run_dir) / TRANSCRIPTS


def transcript_name(slug: str) -> str:
    """The transcript's path inside its run directory, as the episode's record names it."""
    return f"{TRANSCRIPTS}/{slug}.json"


def transcript_lost(run_dir: PathLike, row: dict[str, Any]) -> bool:
    """A record names a transcript that is missing or empty (written, not yet on the disk, when
    the power went); a record that could not be built names none."""
    name = row.get(C.transcript)
    if not isinstance(name, str) or not name:
        return False
    try:
        return (Path(run_dir) / name).stat().st_size == 0
    except OSError:
        return True


def lock_file(run_dir: PathLike) -> Path:
    return Path(run_dir) / LOCK


def plan_file(folder: PathLike) -> Path:
    return Path(folder) / PLAN


def is_run_dir(path: PathLike) -> bool:
    """A directory with records (a run that has not finished an episode yet has none)."""
    return records_file(path).exists()


def is_folder_of_runs(path: PathLike) -> bool:
    """A folder that is not itself a run directory (it may hold some, and a plan.json)."""
    return Path(path).is_dir() and not is_run_dir(path)


def is_records_file(path: PathLike) -> bool:
    """A path that names a records file itself rather than its run directory."""
    return Path(path).name.endswith(".jsonl")


def records_path(path: PathLike) -> Path:
    """The records file a path names: a run directory's records.jsonl, or the file itself."""
    p = Path(path)
    if p.is_dir():
        return records_file(p)
    if p.exists() or is_records_file(p):
        return p
    raise RecordsError(f"{p}: no such run directory or records file")


def existing_records(path: PathLike) -> Path:
    """`records_path`, which must exist."""
    file = records_path(path)
    if not file.exists():
        raise RecordsError(f"{file.parent}: no {RECORDS} (not a run directory, or nothing ran yet)")
    return file


def run_dirs(paths: Iterable[PathLike]) -> list[Path]:
    """The run directories the paths name: a folder that holds run directories (runs/demo: bank/
    and textworld/) stands for them; any other path for itself."""
    out: list[Path] = []
    for p in map(Path, paths):
        runs = sorted(d.parent for d in p.glob(f"*/{RECORDS}")) if is_folder_of_runs(p) else []
        out.extend(runs or [p])
    for p in out:
        utf8_name(p)
    return once(out)


def utf8_name(path: Path) -> None:
    """A run directory's path is text in every table, record and export (pyarrow's strings are
    UTF-8): a name holding a byte that is no UTF-8 (read as a lone surrogate) is one line, not a
    UnicodeEncodeError from deep inside pandas."""
    raw = os.fsencode(path)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        shown = raw.decode("utf-8", "backslashreplace")
        raise RecordsError(
            f"{shown}: its name is not UTF-8 (byte 0x{raw[exc.start]:02x}); a run directory's path is "
            "written into tables and records as text: rename it"
        ) from None


def once(paths: Iterable[Path]) -> list[Path]:
    """Each file or folder once, as first named: `a`, `./a`, `runs/../a` and `a` found in the
    folder `runs` are one (by resolved path). Sources of a fork, a report, an import's files: a
    thing named twice is read once, never played or recorded twice."""
    seen: dict[Path, Path] = {}
    for p in paths:
        seen.setdefault(p.resolve(), p)
    return list(seen.values())


def in_use(run_dir: PathLike) -> bool:
    """Another process holds the run directory's lock (`harness.rundir.store.RunDir.open`): a run is playing into it."""
    lock = lock_file(run_dir)
    if not lock.exists():
        return False
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def recorded_lines(run_dir: PathLike) -> int:
    """The lines of records.jsonl (0 without one): the episodes recorded, read without parsing."""
    file = records_file(run_dir)
    if not file.exists():
        return 0
    regular_records(file)
    count = 0
    with open(file, "rb") as f:  # in chunks: a million records are 1.5 GB
        while chunk := f.read(1 << 24):
            count += chunk.count(b"\n")
    return count


def recorded_any(run_dir: PathLike) -> bool:
    """`recorded_lines(run_dir) > 0`, read up to the first line's end only (a report asks it of
    every run: a million records are 1.5 GB to count)."""
    file = records_file(run_dir)
    if not file.exists():
        return False
    regular_records(file)
    with open(file, "rb") as f:
        while chunk := f.read(1 << 16):
            if b"\n" in chunk:
                return True
    return False


_NOT_REGULAR = {stat.S_IFDIR: "a folder", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}
_NOT_REGULAR |= {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device"}


def not_regular(path: Path) -> str | None:
    """What `path` is when it exists and is no regular file ("a folder", "a FIFO", ...), else None.
    A run's own files are read and written only when it is None: a folder there raised
    IsADirectoryError from deep inside, and a FIFO waits for a writer (or a reader) forever."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # absent, or a file where its folder should be
        return None
    return None if stat.S_ISREG(mode) else _NOT_REGULAR.get(stat.S_IFMT(mode), "no regular file")


def regular_records(file: Path) -> None:
    """A records file is a regular file, or one RecordsError saying what it is: every reader of one
    (`load`, `fork`, `fork --check`, an import's count) opens it only then."""
    if kind := not_regular(file):
        raise RecordsError(f"{file} is {kind} where the run keeps its records file: move it away")


def whole_lines(data: bytes) -> bytes:
    """Records data up to its last newline: what a writer killed mid-line had finished (`data` itself
    where nothing is cut)."""
    return data if not data or data.endswith(b"\n") else data[: data.rfind(b"\n") + 1]


def record_lines(text: IO[str], partial: list[int] | None = None) -> Iterator[tuple[int, str]]:
    """(line number, text) of the non-blank lines of records text, streamed, lines split at
    newlines only (universal newlines: a record's text may hold U+2028 and the like). A run killed
    mid-write leaves an unterminated last line that is no JSON: that episode is not recorded, the
    line is left out and `partial` (when given) receives a 1. An unterminated line that parses is
    a record."""
    for no, line in enumerate(text, start=1):
        if not line.endswith("\n") and line.strip():
            try:
                json.loads(line)
            except json.JSONDecodeError:
                if partial is not None:
                    partial.append(1)
                return
        if line.strip():
            if not line.isascii() and _UNDECODED.search(line):
                raise RecordsError(
                    f"line {no} of the records is not UTF-8 text (a damaged byte); nothing was changed: "
                    "repair or remove that line"
                )
            yield no, line


# what `surrogateescape` decodes a byte that is no UTF-8 into (records are opened with it, so a
# damaged byte is found and named, never replaced by U+FFFD and read as a different key)
_UNDECODED = re.compile("[\udc80-\udcff]")


# what every record has, checked alike by every reader (`run`'s resume, `report`, `export`)
REQUIRED = (*KEY_FIELDS, C.success)
# the key fields added later, and the value a record without one (or, for fork, with null) is read
# with by both readers: decoding unconstrained, an episode played from its start (no fork point)
DEFAULTS = {C.constrain: "none", C.fork: ""}


def check_record(rec: dict[str, Any], where: str) -> None:
    """A record's key fields and success of their types; a hand edit that changed one ("budget":
    "4", "success": "false") is named, whichever command reads it."""
    missing = [f for f in REQUIRED if f not in rec and f not in DEFAULTS]  # later axes: defaults
    if missing:
        raise RecordsError(f"{where}: record lacks the key field(s) {', '.join(missing)}")
    for f in CHECKED:
        error = key_error(f, rec[f])
        if error:
            raise RecordsError(f"{where}: {error}")


# the fields `key_error` checks, in the order a record's are checked
CHECKED = (C.suite, C.task_id, C.model, C.condition, C.budget, C.sample_seed, C.success)


def key_error(field: str, value: Any) -> str | None:
    """What is wrong with a record's value of one of the CHECKED fields (None: nothing). Both
    readers ask it: the per-record one of every record, the columnar one of every distinct value."""
    if field in (C.suite, C.task_id, C.model, C.condition) and (not isinstance(value, str) or not value):
        return f"{field} must be a non-empty string, got {value!r}"
    if field == C.model and (value != value.strip() or not value.isprintable()):
        # as a spec refuses it (harness.run_spec): `run` would play the episode again, `report` refuse it
        return (
            f"model {value!r} has a leading or trailing space or a control character, which no "
            "model name has; the record was edited: repair it"
        )
    if field in (C.budget, C.sample_seed) and (isinstance(value, bool) or not isinstance(value, int)):
        return f"{field} must be an integer, got {value!r}"
    if field == C.success and value not in (True, False, None):
        return f"success must be true, false or null, got {value!r}"
    return None


def record_key(row: dict[str, Any]) -> tuple[Any, ...]:
    """An episode's key as every reader compares it: the key fields' values in order, `constrain`
    "none" for a record from before that axis (it was unconstrained)."""
    return tuple(row.get(f, DEFAULTS[f]) if f == C.constrain else row.get(f) for f in KEY_FIELDS)


def key_text(key: tuple[Any, ...]) -> str:
    """An episode key as messages name it: its fields joined by |, an absent fork point left out."""
    return "|".join(str(v) for v in key if v is not None and v != "")


def check_once(file: PathLike, records: Iterable[tuple[tuple[Any, ...], bool, int]]) -> None:
    """Refuse a records file that holds an episode's result twice, naming both lines. `records`:
    (key, scored, line number) per record; `scored` is false for a harness error, which a later
    result of the same episode may follow (an older harness replayed errors without moving them
    aside). Both readers of a run directory ask this, so a resume and a report never disagree
    about which records exist: the run refuses what the report would refuse, before it changes
    anything (a duplicate is a bug or a hand edit; dropping one silently would hide it)."""
    seen: dict[tuple[Any, ...], int] = {}
    for key, scored, line in records:
        if not scored:
            continue
        if key in seen:
            raise RecordsError(
                f"{file}: episode {key_text(key)} recorded twice (lines {seen[key]} and {line}); "
                "nothing was changed: remove one of the two lines"
            )
        seen[key] = line


def read_lines(file: Path) -> tuple[Iterator[tuple[int, str]], list[int]]:
    """`record_lines` of a records file; the list receives the count (0 or 1) of left-out trailing
    partial lines once the iterator is exhausted."""
    partial: list[int] = []

    regular_records(file)  # before the iterator: the caller's first line names it, not its first read

    def numbered() -> Iterator[tuple[int, str]]:
        with open(file, encoding="utf-8", errors="surrogateescape") as f:
            try:
                yield from record_lines(f, partial)
            except RecordsError as exc:
                raise RecordsError(f"{file}: {exc}") from None

    return numbered(), partial
