"""External code under a time limit (issue 57): a computation that never returns, even one in C
holding the GIL (a big-int `pow`), is stopped by killing the process it runs in, and named."""

from __future__ import annotations

import os
import time

import pytest

from envs.errors import SuiteBug, UserError
from envs.limits import LIMIT_ENV, Sidecar, TimeLimit, bounded

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
    for bad in ("ten", "0", "-1", "inf", "nan"):
        monkeypatch.setenv(LIMIT_ENV, bad)
        with pytest.raises(UserError, match=f"{LIMIT_ENV} takes a number of seconds > 0, got '{bad}'"):
            bounded(sorted, [], what="a sort")
