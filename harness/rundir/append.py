"""records.jsonl's one appender: whole lines, written and flushed as each episode ends, fsynced
in groups by one background thread (`harness.rundir.store`'s RunDir appends through it).

A record's cost does not grow with the run: the file stays open for appends, each line is written
as its episode ends (a killed process keeps it: it is in the kernel's hands), and the syncer
fsyncs what was appended since its last fsync, at most once per SYNC_EVERY_S, so that the episodes
ending in that time share one fsync (a power cut loses at most those records, and a resume plays
their keys again). `close` fsyncs the rest. A failed write cuts what reached the file of its line
off again, and every later append raises the same error: the run stops with the file ending in a
whole record."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path

from harness.rundir.files import STORAGE_ERRNOS, storage_error

# at most one fsync of records.jsonl per this many seconds: the syncer fsynced after every episode
# (2,907 fsyncs for 2,900 episodes at C=8, each waking a thread that then wants the GIL); with
# this, 344 (strace -c)
SYNC_EVERY_S = 0.05


class Appender:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        self._fh: int | None = None  # the descriptor, open for appends from the first append to close()
        self._size = 0  # the file's length after the last whole line appended
        self.broken: Exception | None = None  # an append failed: no later one is tried
        self._sync = threading.Condition()
        self._unsynced = False  # appended since the syncer's last fsync
        self._sync_idle = False  # the syncer waits for an append
        self._syncer: threading.Thread | None = None
        self.sync_error: OSError | None = None

    def append(self, data: bytes) -> None:
        """Write and flush one whole line; the syncer thread fsyncs it."""
        with self._lock:
            if self.broken is not None:
                # a fresh traceback: re-raising one object appends each raise's frames to it
                raise self.broken.with_traceback(None)
            if self.sync_error is not None:
                self.broken = self.sync_error  # raised once to the run: close() will not raise it again
                raise self.sync_error.with_traceback(None)
            if self._fh is None:
                try:  # O_NOFOLLOW: records.jsonl as a planted link would append to whatever it names
                    self._fh = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
                except OSError as exc:  # not writable (a mode, an immutable flag, a read-only disk)
                    self.broken = storage_error(exc, self.path) if exc.errno in STORAGE_ERRNOS else exc
                    raise self.broken.with_traceback(None) from None
                self._size = os.fstat(self._fh).st_size
            try:
                written = 0
                while written < len(data):  # a short write (a disk filling up) is continued, or fails
                    written += os.write(self._fh, data[written:])
            except OSError as exc:
                # what reached the file of this line is cut off again: the file ends with a whole record
                with contextlib.suppress(OSError):
                    os.ftruncate(self._fh, self._size)
                self.broken = storage_error(exc, self.path) if exc.errno in STORAGE_ERRNOS else exc
                raise self.broken from None
            self._size += len(data)
        with self._sync:
            self._unsynced = True
            if self._syncer is None:
                self._syncer = threading.Thread(target=self._sync_loop, name="records-fsync", daemon=True)
                self._syncer.start()
            elif self._sync_idle:
                self._sync.notify()

    def _sync_loop(self) -> None:
        me = threading.current_thread()
        while True:
            with self._sync:
                self._sync_idle = True
                while not self._unsynced and self._syncer is me:
                    self._sync.wait()
                self._sync_idle = False
                if not self._unsynced:
                    return  # closed, nothing left
                self._unsynced = False
                fd = self._fh
                assert fd is not None  # unsynced lines were appended to it, and close() joins this thread first
            try:
                os.fsync(fd)
            except OSError as exc:  # the next append raises it: the run stops instead of losing records quietly
                self.sync_error = exc
                return
            with self._sync:  # what is appended meanwhile waits for the next fsync; close() wakes it
                if self._syncer is me:
                    self._sync.wait(SYNC_EVERY_S)

    def close(self) -> None:
        """Fsync and close the file; a later append opens it again (after a rewrite, the new one)."""
        with self._sync:
            syncer, self._syncer = self._syncer, None
            self._sync.notify()
        if syncer is not None:
            syncer.join()
        with self._lock:
            failed: OSError | None = None
            if self._fh is not None:
                try:
                    os.fsync(self._fh)
                except OSError as exc:
                    failed = exc
                finally:
                    os.close(self._fh)
                    self._fh = None
            failed = failed or self.sync_error  # the syncer's, when no append came after it to raise it
            # a run already stopping on a storage error keeps that error, not this one
            if failed is not None and self.broken is None:
                self.broken = storage_error(failed, self.path) if failed.errno in STORAGE_ERRNOS else failed
                raise self.broken.with_traceback(None) from None
