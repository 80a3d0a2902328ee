"""records.jsonl under many writers: every record once, fsynced in groups, a failed fsync stops
the run; what is written is what the redacting walk would have written."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from harness.errors import StorageError
from harness.loop import EpisodeResult
from harness.recording import build_record
from harness.redact import Redactor
from harness.rundir.store import RunDir, to_json
from harness.spec import build_spec
from harness.types import EpisodeKey


def _spec(out):
    return build_spec(
        {
            "suite": "bank-disputes",
            "models": ["m"],
            "endpoints": ["http://127.0.0.1:9/v1"],
            "conditions": ["raw"],
            "out": str(out),
        }
    )


def _record(i: int, text: str = ""):
    key = EpisodeKey(
        suite="bank-disputes", task_id=f"bank-{i:04d}", model="m", condition="raw", budget=4, sample_seed=0
    )
    result = EpisodeResult(harness_error=text or None)
    return key, build_record(key, result, run_id="r", condition_params={}, config={}, transcript="")


def _opened(tmp_path, redactor=None):
    store = RunDir(tmp_path / "run", redactor)
    store.open(_spec(tmp_path / "run"))
    store.start_session({})
    return store


def test_appends_from_many_threads_are_all_written_once_and_fsynced_in_groups(tmp_path, monkeypatch):
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    store = _opened(tmp_path)
    threads = [
        threading.Thread(target=lambda k=k: [store.append(_record(k * 50 + i)[1]) for i in range(50)]) for k in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    store.close()
    rows = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in rows) == [f"bank-{i:04d}" for i in range(400)]
    assert 1 <= len(synced) <= 401  # at least the close's fsync; never more than one per append


def test_a_failed_fsync_stops_the_next_append(tmp_path, monkeypatch):
    store = _opened(tmp_path)

    def broken(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken)
    store.append(_record(0)[1])
    for _ in range(200):  # the syncer thread meets the error
        if store._appender.sync_error is not None:
            break
        threading.Event().wait(0.01)
    with pytest.raises(OSError, match="Input/output error"):
        store.append(_record(1)[1])
    monkeypatch.undo()
    store.close()  # the disk is back: what was appended is kept
    assert [json.loads(line)["task_id"] for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()] == [
        "bank-0000"
    ]


def test_appends_after_a_rewrite_go_to_the_new_file(tmp_path):
    store = _opened(tmp_path)
    store.append(_record(0, "HTTP 500")[1])
    store.append(_record(1)[1])
    store.close()
    store = RunDir(tmp_path / "run")
    store.open(_spec(tmp_path / "run"))
    store.start_session({}, retry_errors=True)  # moves the error record aside: records.jsonl is rewritten
    store.append(_record(2)[1])
    store.close()
    rows = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in rows] == ["bank-0001", "bank-0002"]


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_record_holding_a_unicode_line_separator_resumes_as_results_reads_it(tmp_path, separator):
    """JSON leaves U+2028, U+2029 and U+0085 unescaped: a record's line holds them. The resume reads
    records.jsonl with the reader results.load uses (lines end at newlines only), so a model's
    text with one in it does not make a resume refuse the run directory as damaged."""
    from results.load import read_records

    store = _opened(tmp_path)
    store.append(_record(0, f"before{separator}after")[1])
    store.append(_record(1)[1])
    store.close()
    assert separator in (tmp_path / "run" / "records.jsonl").read_text(encoding="utf-8")
    again = RunDir(tmp_path / "run")
    done = again.open(_spec(tmp_path / "run"))
    again.close()
    rows, cut = read_records(tmp_path / "run")
    assert len(done) == 2 and cut == 0 and rows[0]["harness_error"] == f"before{separator}after"


def test_a_cut_last_line_is_dropped_on_open_even_where_it_parses(tmp_path):
    """The resume drops what follows the last newline (its episode plays again), where results.load
    keeps an unterminated line that parses: the writer of the resumed run appends after whole lines."""
    store = _opened(tmp_path)
    store.append(_record(0)[1])
    store.append(_record(1)[1])
    store.close()
    path = tmp_path / "run" / "records.jsonl"
    path.write_bytes(path.read_bytes()[:-1])  # the last line's newline never written
    again = RunDir(tmp_path / "run")
    done = again.open(_spec(tmp_path / "run"))
    again.close()
    assert len(done) == 1 and path.read_bytes().count(b"\n") == 1 and path.read_bytes().endswith(b"\n")


SECRET = 'sk-"quoted\\key-0123'


@pytest.mark.parametrize(
    "value",
    [
        {"plain": "nothing to hide", "n": [1, 2.5, None, True]},
        {"echo": f"the key was {SECRET} here"},
        {f"key {SECRET}": "in a key"},
        {"header": "Authorization: Token abcdef123"},
        {"bearer": "got bEaReR xyz123456 back"},
        {"folded": "authorızation: Token abcdef123"},  # dotless i: the patterns' case folding matches it
        {"russian": "Откройте спор по операции", "lone": "\ud800 surrogate"},
    ],
)
def test_written_text_is_what_the_redacting_walk_writes(tmp_path, value):
    redactor = Redactor([SECRET])
    store = RunDir(tmp_path, redactor)
    assert store._redacted_json(value) == to_json(redactor.obj(value), separators=(",", ":"))
    assert SECRET not in store._redacted_json(value)


def test_clean_json_says_clean_only_when_the_walk_would_change_nothing():
    redactor = Redactor([SECRET])
    for value in ({"a": "hello"}, {"a": SECRET}, {"a": "Bearer abcdefgh"}, {"a": "authorİzation: abcdef"}, {"a": "ſ"}):
        text = json.dumps(value, ensure_ascii=False)
        if redactor.clean_json(text):
            assert redactor.obj(value) == value


def test_save_writes_the_transcript_then_the_record_in_the_runs_one_writer_thread(tmp_path, monkeypatch):
    import asyncio

    import harness.rundir.store as store_module

    store = _opened(tmp_path)
    writers: list[tuple[str, str]] = []  # (thread, what) in the order written
    replace, append_line = store_module.replace_file, store.append_line
    monkeypatch.setattr(
        store_module,
        "replace_file",
        lambda path, data, **kw: (
            writers.append((threading.current_thread().name, path.name)),
            replace(path, data, **kw),
        ),
    )
    store.append_line = lambda line: (writers.append((threading.current_thread().name, "record")), append_line(line))
    pairs = [_record(i) for i in range(12)]

    async def main():
        futures = [
            store.save(k, {"turns": [{"i": i}], "harness_error": None}, r, lambda exc: None)
            for i, (k, r) in enumerate(pairs)
        ]
        return await asyncio.gather(*futures)

    saved = asyncio.run(main())
    store.close()
    assert saved == [r for _, r in pairs]
    assert {thread for thread, _ in writers} == {writers[0][0]} and writers[0][0].startswith("records")
    assert [what for _, what in writers] == [w for k, _ in pairs for w in (f"{k.slug()}.json", "record")]
    for i, (k, _) in enumerate(pairs):
        assert json.loads((tmp_path / "run" / store.transcript_name(k)).read_text())["turns"] == [{"i": i}]
    rows = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert [row["task_id"] for row in rows] == [r.task_id for _, r in pairs]
    assert store._writer is None  # close() ends the thread


def test_a_transcript_that_cannot_be_written_becomes_the_episodes_harness_error_record(tmp_path, monkeypatch):
    import asyncio

    import harness.rundir.store as store_module

    store = _opened(tmp_path)

    def full(path, data, **kw):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(store_module, "replace_file", full)
    key, record = _record(1)

    def failed(exc):
        return _record(1, f"recording failed: {exc}")[1]

    async def main():
        return await store.save(key, {"turns": [], "harness_error": None}, record, failed)

    saved = asyncio.run(main())
    store.close()
    assert saved.harness_error == "recording failed: [Errno 28] No space left on device"
    rows = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and rows[0]["harness_error"] == saved.harness_error


def test_episodes_that_end_together_are_one_writer_job_and_each_keeps_its_own_outcome(tmp_path, monkeypatch):
    """Saves asked for in one pass of the loop go to the writer thread as one job; a transcript
    that cannot be written is its own episode's harness-error record, the others' records stand."""
    import asyncio

    import harness.rundir.store as store_module

    store = _opened(tmp_path)
    pairs = [_record(i) for i in range(3)]
    replace = store_module.replace_file

    def second_fails(path, data, **kw):
        if path.name == Path(store.transcript_name(pairs[1][0])).name:
            raise OSError(22, "Invalid argument")
        replace(path, data, **kw)

    monkeypatch.setattr(store_module, "replace_file", second_fails)
    jobs = []

    async def main():
        loop = asyncio.get_running_loop()
        run_in_executor = loop.run_in_executor
        loop.run_in_executor = lambda *a: (jobs.append(a), run_in_executor(*a))[1]
        saves = [
            store.save(k, {"turns": [], "harness_error": None}, r, lambda exc, i=i: _record(i, f"failed: {exc}")[1])
            for i, (k, r) in enumerate(pairs)
        ]
        return await asyncio.gather(*saves)

    saved = asyncio.run(main())
    store.close()
    assert len(jobs) == 1
    assert [s.harness_error for s in saved] == [None, "failed: [Errno 22] Invalid argument", None]
    rows = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert [row["harness_error"] for row in rows] == [s.harness_error for s in saved]


def test_appends_within_the_sync_interval_share_an_fsync_and_close_does_not_wait_it_out(tmp_path, monkeypatch):
    import time

    import harness.rundir.append as append_module

    monkeypatch.setattr(append_module, "SYNC_EVERY_S", 5.0)
    synced = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    store = _opened(tmp_path)
    synced.clear()  # run.json's own, written durably when the session started
    for i in range(50):
        store.append(_record(i)[1])
        time.sleep(0.002)
    before_close = len(synced)
    started = time.monotonic()
    store.close()
    assert time.monotonic() - started < 2.0  # close wakes the syncer from its interval
    assert 1 <= before_close <= 2  # the first append's fsync, then the interval holds the rest
    assert len(synced) <= before_close + 2  # close fsyncs what was left
    rows = (tmp_path / "run" / "records.jsonl").read_text().splitlines()
    assert len(rows) == 50


def test_a_save_nobody_awaits_any_more_leaves_no_unread_exception_when_the_disk_is_full(tmp_path, monkeypatch):
    """When the run stops on a full disk, the lane cancels its other workers, and with them the
    saves they awaited; the writer's error for those saves must still be read, or asyncio logs
    each one with its traceback at exit (the one-line stop message then ends in tracebacks)."""
    import asyncio
    import errno
    import gc

    store = _opened(tmp_path)

    def full(line):
        raise OSError(errno.EFBIG, "File too large")

    store.append_line = full
    unread: list[str] = []

    async def main():
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: unread.append(ctx["message"]))
        saves = [
            store.save(k, {"turns": [], "harness_error": None}, r, lambda exc: None)
            for k, r in (_record(i) for i in range(8))
        ]
        for save in saves:  # their workers were cancelled: nobody will await them
            save.cancel()
        del saves
        await asyncio.sleep(0.2)  # the writer thread fails each of them
        gc.collect()

    asyncio.run(main())
    store.close()
    assert unread == []


def test_the_stopped_stores_error_is_raised_with_a_fresh_traceback_each_time(tmp_path):
    """Every append after a full disk raises the same StorageError; re-raising one object would
    add each raise's frames to its traceback, which grows with every episode that ends after."""
    import traceback

    from harness.errors import StorageError

    store = _opened(tmp_path)
    store._appender.broken = StorageError("cannot write records.jsonl: File too large (EFBIG)")
    depths = []
    for i in range(3):
        with pytest.raises(StorageError) as raised:
            store.append(_record(i)[1])
        depths.append(len(traceback.extract_tb(raised.value.__traceback__)))
    store._appender.broken = None
    store.close()
    assert depths[0] == depths[1] == depths[2]


def test_a_record_that_cannot_be_written_for_a_cancelled_worker_breaks_no_loop_callback(tmp_path):
    import asyncio

    store = _opened(tmp_path)

    def unwritable(record):
        raise ValueError("not JSON")

    store.line = unwritable
    said: list[str] = []

    async def main():
        asyncio.get_running_loop().set_exception_handler(lambda loop, ctx: said.append(ctx["message"]))
        k, r = _record(0)
        save = store.save(k, {"turns": [], "harness_error": None}, r, lambda exc: None)
        save.cancel()  # its worker was cancelled when the run stopped
        await asyncio.sleep(0.05)

    asyncio.run(main())
    store.close()
    assert said == []


def test_transcripts_and_run_json_reach_the_disk_before_the_record_that_names_them(tmp_path, monkeypatch):
    """A power cut must not leave a record beside an empty transcript or an empty run.json: a
    transcript's data is on the disk before its record is appended (written through a descriptor
    opened O_DSYNC, or fsynced where the platform has no O_DSYNC); run.json's data and its entry."""
    import asyncio

    from harness.rundir import files

    events: list[str] = []
    real_open, real_write, real_fsync = os.open, os.write, os.fsync
    durable: set[int] = set()

    def name(fd):
        return os.path.basename(os.readlink(f"/proc/self/fd/{fd}"))

    def open_(path, flags, *args, **kwargs):
        fd = real_open(path, flags, *args, **kwargs)
        (durable.add if files._DSYNC and flags & files._DSYNC else durable.discard)(fd)
        return fd

    def write(fd, data):
        if fd in durable:
            events.append("durable write " + name(fd))
        return real_write(fd, data)

    def fsync(fd):
        events.append("fsync " + name(fd))
        real_fsync(fd)

    monkeypatch.setattr(os, "open", open_)
    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "fsync", fsync)
    on_disk = "durable write" if files._DSYNC else "fsync"
    store = _opened(tmp_path)
    assert f"{on_disk} run.tmp" in events and "fsync run" in events  # run.json's data, then the folder's entry
    assert events.index(f"{on_disk} run.tmp") < events.index("fsync run")
    events.clear()
    key, record = _record(1)
    append_line = store.append_line
    store.append_line = lambda line: (events.append("append"), append_line(line))

    async def main():
        return await store.save(key, {"turns": [], "harness_error": None}, record, lambda exc: None)

    asyncio.run(main())
    store.close()
    slug = key.slug()
    assert events.index(f"{on_disk} {slug}.tmp") < events.index("append")


def test_a_transcript_is_durable_without_o_dsync_too(tmp_path, monkeypatch):
    """Where the platform has no O_DSYNC, replace_file fsyncs the data before the rename."""
    from harness.rundir import files

    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(files, "_DSYNC", 0)
    monkeypatch.setattr(os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd)))
    monkeypatch.setattr(os, "replace", lambda a, b: (events.append("rename"), real_replace(a, b)))
    files.replace_file(tmp_path / "t.json", b"{}", durable=True, entry=False)
    assert events == ["fsync", "rename"] and (tmp_path / "t.json").read_bytes() == b"{}"


def test_replace_file_never_writes_through_what_was_left_at_its_temporary_name(tmp_path):
    """A file or a link left at the temporary name (a killed writer, or planted) is replaced, its
    target untouched."""
    from harness.rundir import files

    target = tmp_path / "elsewhere"
    target.write_bytes(b"keep")
    (tmp_path / "t.tmp").symlink_to(target)
    files.replace_file(tmp_path / "t.json", b"new", durable=True)
    assert target.read_bytes() == b"keep" and (tmp_path / "t.json").read_bytes() == b"new"
    assert not (tmp_path / "t.tmp").exists()
    (tmp_path / "t.tmp").write_bytes(b"left by a killed writer")
    files.replace_file(tmp_path / "t.json", b"newer")
    assert (tmp_path / "t.json").read_bytes() == b"newer" and not (tmp_path / "t.tmp").exists()


def test_a_disk_turned_read_only_before_close_is_a_storage_error_and_an_earlier_one_is_kept(tmp_path, monkeypatch):
    import errno as errno_module

    store = _opened(tmp_path)
    store.append(_record(1)[1])
    real_fsync = os.fsync

    def read_only(fd):
        raise OSError(errno_module.EROFS, "Read-only file system")

    monkeypatch.setattr(os, "fsync", read_only)
    with pytest.raises(StorageError, match="Read-only file system"):
        store.close()  # the last fsync failing is the run's storage error, one line
    monkeypatch.setattr(os, "fsync", real_fsync)
    # a run already stopping on a full disk keeps that error when the close's fsync fails too
    store = _opened(tmp_path / "b")
    store.append(_record(1)[1])
    store._appender.broken = StorageError("cannot write records.jsonl: No space left on device (ENOSPC)")
    monkeypatch.setattr(os, "fsync", read_only)
    store.close()  # no second error replaces the first


def test_records_this_user_may_not_write_are_a_storage_error(tmp_path, monkeypatch):
    import errno as errno_module

    import harness.rundir.append as append_module

    store = _opened(tmp_path)
    store._appender.close()
    real_open = os.open

    def denied(path, flags, *args):
        if str(path).endswith("records.jsonl"):
            raise PermissionError(errno_module.EACCES, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(append_module.os, "open", denied)
    with pytest.raises(StorageError, match="Permission denied"):
        store.append(_record(1)[1])
    monkeypatch.setattr(append_module.os, "open", real_open)
    store.close()


def test_a_disk_full_at_the_start_leaves_no_lock_and_no_folders(tmp_path, monkeypatch):
    import errno as errno_module

    import harness.rundir.folder as dir_module

    def full(fd, data, offset):
        raise OSError(errno_module.ENOSPC, "No space left on device")

    monkeypatch.setattr(dir_module.os, "pwrite", full)
    store = RunDir(tmp_path / "run")
    with pytest.raises(StorageError, match="No space left"):
        store.open(_spec(tmp_path / "run"))
    assert not (tmp_path / "run").exists()
