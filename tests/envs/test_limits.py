"""External code under a time limit (issue 57): a computation that never returns, even one in C
holding the GIL (a big-int `pow`), is stopped by killing the process it runs in, and named."""

from __future__ import annotations

import os
import re
import time
from decimal import Decimal, getcontext

import pytest

from envs.errors import SuiteBug, UserError
from envs.limits import LIMIT_ENV, MAX_LIMIT_S, MEMORY_ENV, MemoryLimit, Sidecar, TimeLimit, bounded

# what a model sent BFCL's MathAPI: minutes of C, holding the GIL, no thread or signal stops it
HUGE = (9, 999_999_999)


@pytest.fixture
def one_second(monkeypatch):
    monkeypatch.setenv(LIMIT_ENV, "1")


def test_a_computation_that_never_returns_is_stopped_at_the_limit_and_named(one_second):
    start = time.monotonic()
    with pytest.raises(TimeLimit, match=r"the power did not return within 1 s and was stopped"):
        bounded(pow, *HUGE, what="the power")
    assert time.monotonic() - start < 30  # the limit stopped it, not the computation's end


def test_results_and_exceptions_come_back_whole(one_second):
    assert bounded(sorted, [3, 1, 2], what="a sort") == [1, 2, 3]
    with pytest.raises(KeyError, match="'gone'"):
        bounded({}.__getitem__, "gone", what="a lookup")
    bug = SuiteBug("the success check", ValueError("no"))
    with pytest.raises(SuiteBug, match=r"a bug in the suite: the success check raised ValueError: no"):
        bounded(_raise, bug, what="a check")
    # what would end the run, or end the child without an answer, is an error naming what ran
    with pytest.raises(RuntimeError, match="a check raised SystemExit: 0"):
        bounded(_raise, SystemExit(0), what="a check")
    with pytest.raises(RuntimeError, match=r"a check ended its process without an answer \(exit status 3\)"):
        bounded(os._exit, 3, what="a check")


def _raise(exc: BaseException) -> None:
    raise exc


class Counter:
    def __init__(self) -> None:
        self.n = 0


def _add(counter: Counter, k: int) -> int:
    counter.n += k
    return counter.n


def _power(_: Counter) -> int:
    return pow(*HUGE)


def test_a_sidecar_keeps_its_own_copy_in_step_and_is_gone_after_the_limit(one_second):
    host = Counter()
    side = Sidecar(host)
    assert [side.ask(_add, 2, what="add"), side.ask(_add, 3, what="add")] == [2, 5]  # its copy, in order
    assert host.n == 0  # this process's state is its own
    with pytest.raises(TimeLimit, match="the power did not return within 1 s"):
        side.ask(_power, what="the power")
    with pytest.raises(RuntimeError, match=r"add was not run: .* was stopped at the limit \(the power\)"):
        side.ask(_add, 1, what="add")
    side.close()


def test_a_limit_that_is_no_number_of_seconds_is_one_line(monkeypatch):
    # 3e9 s overflowed the OS timer (signal.alarm takes a C int) and failed every call (issue 66)
    for bad in ("ten", "0", "-1", "inf", "nan", "3e9", str(2**31)):
        monkeypatch.setenv(LIMIT_ENV, bad)
        said = f"{LIMIT_ENV} takes a number of seconds > 0 and at most 2,147,483,644 (what the OS timer takes), got"
        with pytest.raises(UserError, match=re.escape(f"{said} '{bad}'")):
            bounded(sorted, [], what="a sort")
    monkeypatch.setenv(LIMIT_ENV, str(MAX_LIMIT_S))
    assert bounded(sorted, [2, 1], what="a sort") == [1, 2]  # the largest accepted runs


def test_a_memory_limit_that_is_no_number_of_mib_is_one_line(monkeypatch):
    for bad in ("lots", "1.5", "0", "15", str(2**40)):
        monkeypatch.setenv(MEMORY_ENV, bad)
        with pytest.raises(UserError, match=f"{MEMORY_ENV} takes a whole number of MiB from 16 to .*, got '{bad}'"):
            bounded(sorted, [], what="a sort")


def _square_root(*_: object) -> object:
    """BFCL's MathAPI.square_root(number=2, precision=10**10): 4.6 GiB of digits."""
    getcontext().prec = 10**10
    return Decimal(2).sqrt()


def _wrapped(*_: object) -> object:
    try:
        return _square_root()
    except Exception as exc:  # a suite's check that wraps what it met (envs.success: SuiteBug)
        raise SuiteBug("the success check", exc) from exc


@pytest.mark.parametrize("fn", [_square_root, _wrapped])
def test_a_computation_past_the_memory_limit_is_stopped_and_blamed_on_the_limit(monkeypatch, fn):
    monkeypatch.setenv(MEMORY_ENV, "256")
    start = time.monotonic()
    with pytest.raises(
        MemoryLimit, match=f"the root needed more than 256 MiB of memory and was stopped .*{MEMORY_ENV}"
    ):
        bounded(fn, what="the root")
    assert time.monotonic() - start < 5  # refused at the bound, not computed for seconds
    assert bounded(sorted, [2, 1], what="a sort") == [1, 2]  # this process's memory is its own


def test_a_sidecar_past_the_memory_limit_is_gone(monkeypatch):
    monkeypatch.setenv(MEMORY_ENV, "256")
    side = Sidecar(Counter())
    assert side.ask(_add, 2, what="add") == 2
    with pytest.raises(MemoryLimit, match="the root needed more than 256 MiB"):
        side.ask(_square_root, what="the root")
    with pytest.raises(RuntimeError, match=r"add was not run: .* was stopped at the memory limit \(the root\)"):
        side.ask(_add, 1, what="add")
    side.close()


def _forks_a_sleeper(path: str) -> bool:
    """A check that starts a process of its own, which outlives it and holds its pipe open."""
    pid = os.fork()
    if pid == 0:
        with open(path, "w") as f:
            f.write(str(os.getpid()))
        time.sleep(60)
        os._exit(0)
    while not os.path.getsize(path) if os.path.exists(path) else True:
        time.sleep(0.01)
    return True


def test_a_check_that_forks_answers_in_time_and_its_child_ends_with_it(one_second, tmp_path):
    """Issue 66: the forked child held the answer's pipe open: the check was reported as timed
    out though it had answered, and the child outlived the run."""
    where = tmp_path / "pid"
    start = time.monotonic()
    assert bounded(_forks_a_sleeper, str(where), what="a check") is True
    assert time.monotonic() - start < 1
    grandchild = int(where.read_text())
    for _ in range(100):
        if not _running(grandchild):
            break
        time.sleep(0.01)
    else:
        pytest.fail(f"the check's child {grandchild} outlived it")


def _running(pid: int) -> bool:
    """Alive and not a zombie (one orphaned here waits for an init that may not reap it)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False
