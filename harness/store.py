"""A run directory: records.jsonl (append-only, fsynced), run.json, transcripts/.

Resume = skip keys already recorded. A line cut short by a killed run is dropped on open, so a
resumed run has exactly one record per key. Harness-error records can be moved aside
(harness_errors.jsonl keeps them) so that their episodes run again.
"""

from __future__ import annotations

import json
import os
import threading
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from common.errors import UserError
from harness.types import EpisodeKey, EpisodeRecord, RunSpec


class RunDirError(UserError):
    """The run directory cannot take this run (another spec's records are there)."""


def _replace(path: Path, data: bytes) -> None:
    """Write beside, then rename: a reader never sees half a file."""
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _key_id(row: dict[str, Any]) -> str:
    return EpisodeKey(**{k: row[k] for k in EpisodeKey.model_fields}).id()


class RunDir:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.records = self.path / "records.jsonl"
        self.errors = self.path / "harness_errors.jsonl"
        self.meta = self.path / "run.json"
        self.transcripts = self.path / "transcripts"
        self._lock = threading.Lock()
        self.run_id = ""

    def open(self, spec: RunSpec, provenance: dict[str, Any], retry_errors: bool = False) -> set[str]:
        """Check identity, write run.json, repair a cut last line; return the keys already done."""
        self.transcripts.mkdir(parents=True, exist_ok=True)
        meta = json.loads(self.meta.read_text()) if self.meta.exists() else None
        if meta is not None and meta["identity_hash"] != spec.identity_hash():
            theirs, ours = meta["spec"], spec.identity()
            diff = sorted(k for k in ours if theirs.get(k) != ours[k])
            raise RunDirError(
                f"{self.path} holds the records of another run spec (different: {', '.join(diff)}); "
                "refusing to append to it. Use another --out directory."
            )
        self.run_id = meta["run_id"] if meta else uuid.uuid4().hex[:12]
        session = {"started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"), **provenance}
        meta = meta or {"run_id": self.run_id, "identity_hash": spec.identity_hash(), "spec": spec.identity(), "sessions": []}
        meta["execution"] = spec.model_dump(exclude=set(spec.identity()))
        meta["sessions"].append(session)
        self._write_json(self.meta, meta)
        rows = self._read_repairing()
        if retry_errors:
            failed = [r for r in rows if r.get("harness_error")]
            if failed:
                with self.errors.open("a", encoding="utf-8") as fh:
                    fh.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in failed)
                rows = [r for r in rows if not r.get("harness_error")]
                self._rewrite(rows)
        return {_key_id(r) for r in rows}

    def update_session(self, **fields: Any) -> None:
        meta = json.loads(self.meta.read_text())
        meta["sessions"][-1].update(fields)
        self._write_json(self.meta, meta)

    def _read_repairing(self) -> list[dict[str, Any]]:
        if not self.records.exists():
            return []
        data = self.records.read_bytes()
        if data and not data.endswith(b"\n"):
            data = data[: data.rfind(b"\n") + 1]  # the killed writer's last line never finished
            self._rewrite_bytes(data)
        return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]

    def _rewrite(self, rows: list[dict[str, Any]]) -> None:
        self._rewrite_bytes("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode())

    def _rewrite_bytes(self, data: bytes) -> None:
        _replace(self.records, data)

    def _write_json(self, path: Path, obj: Any) -> None:
        _replace(path, json.dumps(obj, indent=2, ensure_ascii=False, default=str).encode())

    def write_transcript(self, key: EpisodeKey, data: dict[str, Any]) -> str:
        rel = f"transcripts/{key.slug()}.json"
        self._write_json(self.path / rel, {"key": key.model_dump(), **data})
        return rel

    def append(self, record: EpisodeRecord) -> None:
        line = record.model_dump_json() + "\n"
        with self._lock, self.records.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
