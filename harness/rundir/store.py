"""A run directory: records.jsonl (append-only, fsynced), run.json, transcripts/ (their names and
paths, and the reader of records.jsonl's lines, are `results.rundir`'s: `results` reads what this writes).

Resume = skip keys already recorded. A line cut short by a killed run is dropped on open, so a
resumed run has exactly one record per key. A records file that holds an episode's result twice
is refused as the report refuses it (`results.rundir.check_once`, both lines named), before
anything is changed. Harness-error records can be moved aside (harness_errors.jsonl keeps them)
so that their episodes run again.

One process at a time: `open` takes an exclusive lock (`.lock`, released by the kernel even when
the holder is killed) for the length of the run. Nothing is written before `start_session`, and a
run that fails to start (no server, a wrong model name) removes the folders and lock file its
`open` made: it leaves nothing that looks like a run or blocks the corrected command. Every text
written passes through the run's `Redactor`, and a string no UTF-8 encoder takes (a lone
surrogate from a model) is written as a JSON escape instead of aborting the run
(`harness.rundir.files`: the JSON, the atomic replace, a full disk as a StorageError).

records.jsonl is appended to by `harness.rundir.append` (whole lines, fsynced in groups). An
episode's transcript and then its record are written by the run's one writer thread (`save`)
while its worker plays the next episode: a killed run has either both, or a transcript whose key
it replays. Transcripts are compact JSON (one line; `python -m json.tool FILE` or
`repair-harness show` reads them); each call keeps the messages it added
(`harness.loop.full_messages` rebuilds what was sent).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import fcntl
import functools
import json
import os
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from envs.errors import UserError
from harness.errors import StorageError
from harness.plugins import Plugin, PluginError, check_unchanged, mended
from harness.redact import Redactor
from harness.run_spec import RunSpec, grows_grid
from harness.rundir.append import Appender
from harness.rundir.files import compact_json, replace_file, to_json
from harness.rundir.folder import RunDirError, make_dirs, refuse_links, remove_created, take_lock
from harness.rundir.recorded import key_id, recorded
from harness.types import EpisodeKey, EpisodeRecord
from results import run_meta, rundir
from results.errors import RecordsError


class RunDir:
    def __init__(self, path: str | Path, redactor: Redactor | None = None):
        self.path = Path(path)
        self.records = rundir.records_file(self.path)
        self.errors = rundir.errors_file(self.path)
        self.meta = rundir.meta_file(self.path)
        self.transcripts = rundir.transcripts_dir(self.path)
        self.redactor = redactor or Redactor()
        self._lock_fd: int | None = None
        self._spec: RunSpec | None = None
        self._rows: list[dict[str, Any]] = []
        self.run_id = ""
        self._appender = Appender(self.records)
        self._writer: concurrent.futures.ThreadPoolExecutor | None = None
        # saves asked for, whose JSON is made once the loop has done what it already holds (`save`)
        self._unsaved: list[tuple[Any, ...]] = []
        self._created: list[Path] = []  # what `open` made (folders, the lock file), deepest last
        self._grown: dict[str, Any] = {}  # the grid fields this session adds to, old and new
        self._started = False
        self._plugins: list[dict[str, Any]] = []  # the plugins of this session (harness.plugins)
        self._mended: list[dict[str, Any]] = []  # the plugins `--plugin-changed` took, changed
        # records `open` found without their transcripts (a power cut), dropped to be played again
        self.lost_transcripts = 0

    def open(self, spec: RunSpec, plugins: Sequence[Plugin] = (), plugin_changed: bool = False) -> set[str]:
        """Lock the directory, check the spec's identity and the plugins' sources, repair a cut
        last line; return the keys already done. Writes nothing but the lock: `start_session`
        writes once the run can start. `plugin_changed`: a plugin mended since the run recorded
        it is taken (`--retry-errors --plugin-changed`), and run.json's plugin history says so."""
        refuse_links(self.path)
        self._created = make_dirs(self.path, self.transcripts)
        self._lock_fd = take_lock(self.path, self._created)
        meta = self._read_meta()
        self._grown = {}
        self._plugins = [p.record() for p in plugins]
        self._mended = []
        if meta is not None:
            try:
                if plugin_changed:
                    self._mended = mended(meta.get("plugins", []), plugins, str(self.path))
                else:
                    check_unchanged(meta.get("plugins", []), plugins, str(self.path))
            except PluginError:
                self.close()
                raise
        if meta is not None and meta["identity_hash"] != spec.identity_hash():
            theirs, ours = meta["spec"], spec.identity()
            diff = sorted(k for k in {*ours, *theirs} if theirs.get(k) != ours.get(k))
            other = [k for k in diff if not grows_grid(k, theirs, ours)]
            if other:
                self.close()
                raise RunDirError(
                    f"{self.path} holds the records of another run spec (different: {', '.join(other)}); "
                    "refusing to append to it. A resume may only add to the grid (more --tasks, models, "
                    "conditions, budgets or seeds); for anything else use another --out directory."
                )
            self._grown = {k: {"from": theirs.get(k), "to": ours.get(k)} for k in diff}
        self._spec = spec
        self.run_id = meta["run_id"] if meta else uuid.uuid4().hex[:12]
        try:
            self._rows = self._read_repairing()
        except UserError:
            self.close()
            raise
        return {key_id(r) for r in self._rows}

    def errors_on_record(self) -> int:
        """Harness-error records among those `open` found (a plain resume does not replay them)."""
        return sum(1 for r in self._rows if r.get("harness_error"))

    def error_keys(self) -> set[str]:
        """The episodes `--retry-errors` plays again: those recorded only as harness errors (a
        result recorded after an error, by an older harness's replay, stands; the error still
        moves aside)."""
        scored = {key_id(r) for r in self._rows if not r.get("harness_error")}
        return {k for r in self._rows if r.get("harness_error") and (k := key_id(r)) not in scored}

    def move_errors_aside(self) -> None:
        """`--retry-errors` with no episode to play: the harness-error records still move aside."""
        meta = self._read_meta()
        if meta is not None and self.errors_on_record():
            self._move_errors_aside(meta)

    def start_session(self, provenance: dict[str, Any], retry_errors: bool = False) -> None:
        """The run starts: record this session in run.json; with `retry_errors`, move the
        harness-error records aside so that their episodes run again."""
        assert self._spec is not None, "start_session() before open()"
        spec = self._spec
        meta = self._read_meta() or {
            "run_id": self.run_id,
            "identity_hash": spec.identity_hash(),
            "spec": spec.identity(),
            "sessions": [],
        }
        self._started = True
        if self._grown:  # the grid grew: the run directory now stands for the larger one
            meta.update(identity_hash=spec.identity_hash(), spec=spec.identity())
            provenance = {**provenance, "grid_extended": self._grown}
        meta["execution"] = spec.model_dump(exclude=set(spec.identity()) | {"fork"})
        # every plugin any session ran with (a resume has refused a changed one)
        known = {p["name"] for p in self._plugins}
        meta["plugins"] = self._plugins + [p for p in meta.get("plugins", []) if p.get("name") not in known]
        started = datetime.now(UTC).isoformat(timespec="seconds")
        if self._mended:  # the records scored under the old code stay; this says which they are
            scored = sum(1 for r in self._rows if r.get("success") is not None)
            meta.setdefault("plugin_history", []).append(
                {"at": started, "changed": self._mended, "scored_under_the_old_code": scored}
            )
        meta["sessions"].append({"started_at": started, **provenance})
        self._write_json(self.meta, meta)
        if retry_errors:
            self._move_errors_aside(meta)

    def _move_errors_aside(self, meta: dict[str, Any]) -> None:
        """Harness-error records move from records.jsonl to harness_errors.jsonl, so that their
        episodes play again: three atomic replaces. run.json names the move first (`moving_errors`,
        an id each moved line carries as `moved_by`); the errors file then gains each line that it
        does not yet hold under that id; records.jsonl loses them; run.json forgets the move. A run
        killed anywhere in between finds the move named and redoes it under the same id, which
        adds no second copy: 0 records lost, 0 duplicated."""
        failed = [r for r in self._rows if r.get("harness_error")]
        if not failed:
            if meta.pop("moving_errors", None) is not None:  # killed after its last step but one
                self._write_json(self.meta, meta)
            return
        move = meta.setdefault("moving_errors", uuid.uuid4().hex[:12])
        self._write_json(self.meta, meta)
        kept = self.errors.read_text(encoding="utf-8").splitlines(keepends=True) if self.errors.exists() else []
        if kept and not kept[-1].endswith("\n"):
            kept[-1] = ""  # the cut last line of a writer killed in the old, non-atomic way
        have = set(kept)
        moved = [line for r in failed if (line := to_json({**r, "moved_by": move}) + "\n") not in have]
        replace_file(self.errors, "".join([*kept, *moved]).encode())
        self._rows = [r for r in self._rows if not r.get("harness_error")]
        self._rewrite(self._rows)
        del meta["moving_errors"]
        self._write_json(self.meta, meta)

    def update_session(self, **fields: Any) -> None:
        """Add to this session's entry of run.json (a later phase's servers, the concurrency played)."""
        meta = json.loads(self.meta.read_text())
        meta["sessions"][-1].update(self.redactor.obj(fields))
        self._write_json(self.meta, meta)

    def close(self) -> None:
        # saves whose turn never came (the loop stopped first, on an interrupt): written here, in order
        unsaved, self._unsaved = self._unsaved, []
        for key, transcript, record, failed, _ in unsaved:
            self._save(key, self._transcript_bytes(key, transcript), record, self.line(record), failed)
        if self._writer is not None:
            self._writer.shutdown()
            self._writer = None
        self._appender.close()
        if self._lock_fd is not None:
            if not self._started:
                remove_created(self._created)
            fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _read_meta(self) -> dict[str, Any] | None:
        try:
            meta = run_meta.read_meta(self.path)  # the one reader of run.json: the report's verdict too
        except RecordsError as exc:
            raise RunDirError(str(exc)) from None
        if meta is None:
            return None
        missing = [k for k in ("identity_hash", "spec", "run_id", "sessions") if meta.get(k) is None]
        if missing:
            raise RunDirError(f"{self.meta} is damaged (no {', '.join(missing)}); move it away or use another --out")
        return meta

    def _read_repairing(self) -> list[dict[str, Any]]:
        """The records, checked (each line a record, each result once) before anything changes;
        then a cut last line is cut off."""
        if not self.records.exists():
            return []
        data = self.records.read_bytes()
        whole = rundir.whole_lines(data)
        rows, numbers = recorded(self.records, whole)
        lost = {i for i, r in enumerate(rows) if rundir.transcript_lost(self.path, r)}
        self.lost_transcripts = len(lost)
        if lost:  # records a crash kept without their transcripts: they go, their episodes play again
            gone = {numbers[i] for i in lost}
            lines = whole.split(b"\n")[:-1]  # numbered as `record_lines` numbers them: at newlines only
            self._rewrite_bytes(b"".join(line + b"\n" for n, line in enumerate(lines, start=1) if n not in gone))
            rows = [r for i, r in enumerate(rows) if i not in lost]
        elif whole is not data:  # the killed writer's last line never finished: it goes, its episode plays again
            self._rewrite_bytes(whole)
        return rows

    def _rewrite(self, rows: list[dict[str, Any]]) -> None:
        self._rewrite_bytes("".join(to_json(r) + "\n" for r in rows).encode())

    def _rewrite_bytes(self, data: bytes) -> None:
        self._appender.close()  # later appends go to the new file
        replace_file(self.records, data)

    def _write_json(self, path: Path, obj: Any) -> None:
        replace_file(path, to_json(self.redactor.obj(obj), indent=2).encode(), durable=True)

    def _redacted_json(self, obj: Any) -> str:
        """`to_json(redactor.obj(obj))` compact, walking the strings only when the text shows
        something to redact (`Redactor.clean_json`)."""
        text = compact_json(obj)
        if text is not None and self.redactor.clean_json(text):
            return text
        return to_json(self.redactor.obj(obj), separators=(",", ":"))

    def save(
        self,
        key: EpisodeKey,
        transcript: dict[str, Any],
        record: EpisodeRecord,
        failed: Callable[[Exception], EpisodeRecord],
    ) -> asyncio.Future[EpisodeRecord]:
        """An ended episode's transcript, then its record, written by the run's one writer thread
        while the episode's worker plays on; the future gives the record appended: `failed(exc)`'s
        harness-error record where the transcript could not be written.

        The JSON is made on the event loop, and the thread does file calls only: a thread that
        runs Python takes the GIL whenever the loop releases it for a socket call, and the loop
        then waits for it. Transcripts written by asyncio's default pool (six threads), each
        awaited by its episode, cost 8-18% of the calls per second at C=32, L=50 ms
        (benchmarks/throughput.py). The JSON is made after what the loop already has to do (the
        worker's next episode sends its first request first): episodes that end together (at C=32
        they do, in one burst) would otherwise each hold back the others' next requests by their
        records' JSON, 17-20 ms on the first call of an episode instead of 5 (issue 40). Saves are
        made in the order they were asked for."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[EpisodeRecord] = loop.create_future()
        self._unsaved.append((key, transcript, record, failed, done))
        if len(self._unsaved) == 1:
            # a timer, not call_soon: due timers run after the callbacks the loop already holds
            # (the next requests' writes, the answers that came in), call_soon's before them
            loop.call_later(0, self._save_unsaved)
        return done

    def _save_unsaved(self) -> None:
        if not self._unsaved:  # `close` wrote them
            return
        if self._writer is None:
            self._writer = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="records")
        unsaved, self._unsaved = self._unsaved, []
        batch, waiting = [], []
        for key, transcript, record, failed, done in unsaved:
            try:
                data, line = self._transcript_bytes(key, transcript), self.line(record)
            except Exception as exc:  # a record that cannot be written: the worker awaiting it hears it
                if not done.done():  # a worker cancelled as the run stopped awaits it no more
                    done.set_exception(exc)
                continue
            batch.append((key, data, record, line, failed))
            waiting.append(done)
        if batch:
            # the episodes that ended together go to the writer as one job: its thread woken, and
            # the loop told, once for them all (a third as often at C=32, L=0)
            written = asyncio.get_running_loop().run_in_executor(self._writer, self._save_all, batch)
            written.add_done_callback(functools.partial(_settle, waiting))

    def _save_all(self, batch: list[tuple[Any, ...]]) -> list[EpisodeRecord | Exception]:
        """Each episode's `_save` in order, its record or its exception: one failing leaves the
        others theirs, as a job each did."""
        saved: list[EpisodeRecord | Exception] = []
        for item in batch:
            try:
                saved.append(self._save(*item))
            except Exception as exc:
                saved.append(exc)
        return saved

    def _save(
        self,
        key: EpisodeKey,
        transcript: bytes,
        record: EpisodeRecord,
        line: str,
        failed: Callable[[Exception], EpisodeRecord],
    ) -> EpisodeRecord:
        try:
            # its data on the disk before the record that names it is appended (a power cut
            # otherwise leaves records beside empty transcripts). Its folder's entry is not synced
            # here, a millisecond an episode: a record whose transcript a crash lost is played
            # again on resume (`_read_repairing`)
            replace_file(self.path / self.transcript_name(key), transcript, durable=True, entry=False)
        except StorageError:  # a full disk fails every episode alike: the run stops
            raise
        except Exception as exc:  # the episode's harness error, never the end of the run
            record = failed(exc)
            line = self.line(record)
        self.append_line(line)
        return record

    @staticmethod
    def transcript_name(key: EpisodeKey) -> str:
        return rundir.transcript_name(key.slug())

    def _transcript_bytes(self, key: EpisodeKey, data: dict[str, Any]) -> bytes:
        return self._redacted_json({"key": key.model_dump(), **data}).encode()

    def line(self, record: EpisodeRecord) -> str:
        """The record's line of records.jsonl, redacted."""
        return self._redacted_json(record.model_dump(mode="json")) + "\n"

    def append(self, record: EpisodeRecord) -> None:
        self.append_line(self.line(record))

    def append_line(self, line: str) -> None:
        """Write and flush a record's line (`harness.rundir.append`)."""
        self._appender.append(line.encode("utf-8"))


def _settle(waiting: list[asyncio.Future[Any]], written: asyncio.Future[list[Any]]) -> None:
    """Each of `waiting` as the writer's job for them ended: its record, or its exception."""
    if written.cancelled():
        for done in waiting:
            if not done.done():
                done.cancel()
        return
    # read even when nobody waits for them any more (their workers were cancelled when the run
    # stopped on a full disk): an unread exception is logged with its traceback at exit
    exc = written.exception()
    for done, saved in zip(waiting, [exc] * len(waiting) if exc is not None else written.result(), strict=True):
        if done.done():
            continue
        if isinstance(saved, BaseException):
            done.set_exception(saved)
        else:
            done.set_result(saved)
