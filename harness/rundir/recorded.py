"""records.jsonl as a resume finds it: each whole line a record, each episode's result once, checked
as the report checks them (`results.rundir`) before the run changes anything. `store.RunDir.open`
then drops what a crash left (a cut last line, records whose transcripts were lost)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

from harness.rundir.folder import RunDirError
from harness.types import EpisodeKey
from results import rundir
from results.errors import RecordsError


def key_id(row: dict[str, Any]) -> str:
    # a record from before the constrain axis has no `constrain`: it was unconstrained
    return EpisodeKey.of(row).id()


def recorded(records: Path, whole: bytes) -> tuple[list[dict[str, Any]], list[int]]:
    """The records of `whole` (records.jsonl's whole lines) and their line numbers; a RunDirError
    naming the line where one is not a record, or a result is recorded twice."""
    rows, numbers = [], []
    text = io.StringIO(whole.decode("utf-8", errors="surrogateescape"), newline=None)
    try:
        numbered = list(rundir.record_lines(text))
    except RecordsError as exc:
        raise RunDirError(f"{records}: {exc}") from None
    for number, line in numbered:
        try:
            row = json.loads(line)
            rundir.check_record(row, f"{records} line {number}")  # the report's verdict too
            key_id(row)
        except RecordsError as exc:
            raise RunDirError(f"{exc}; nothing was changed: repair that line, or use another --out") from None
        except (ValueError, KeyError, TypeError):
            raise RunDirError(
                f"{records} line {number} is not a record (damaged in the middle, not cut at the end); "
                "nothing was changed: repair or remove that line, or use another --out"
            ) from None
        rows.append(row)
        numbers.append(number)
    rundir.check_once(
        records,
        ((rundir.record_key(r), r.get("success") is not None, n) for r, n in zip(rows, numbers, strict=True)),
    )
    return rows, numbers
