"""A sidecar kept between episodes (issue 67): an episode that closes in good order leaves its
sidecar to the next one, which builds its own host there from its data; the guarantee stays: a
computation past the limit kills it, the episode is a harness error, the next episode gets a fresh
one; a process forked from here never uses this process's kept sidecars."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from envs.limits import LIMIT_ENV, Sidecar, TimeLimit


class Tally:
    def __init__(self, start: int) -> None:
        self.n = start


def _tally(start: int) -> Tally:
    return Tally(start)


def _add(tally: Tally, k: int) -> int:
    tally.n += k
    return tally.n


def _pid(_: Tally) -> int:
    return os.getpid()


def _forever(_: Tally) -> None:
    while True:
        pass


def _episode(start: int) -> Sidecar:
    return Sidecar(Tally(start), build=(_tally, (start,)))


def test_the_next_episode_takes_the_kept_sidecar_with_its_own_host():
    first = _episode(10)
    assert first.ask(_add, 1, what="add") == 11
    pid = first.ask(_pid, what="pid")
    first.close()
    with pytest.raises(RuntimeError, match="was closed with its episode"):
        first.ask(_add, 1, what="add")  # never in place, never on the next episode's host
    second = _episode(100)
    assert second.ask(_pid, what="pid") == pid  # no fork
    assert second.ask(_add, 5, what="add") == 105  # its own host, built there, not the first's
    second.close()


def test_episodes_at_once_each_have_their_own_and_a_stopped_one_is_never_kept(monkeypatch):
    monkeypatch.setenv(LIMIT_ENV, "1")
    a, b = _episode(0), _episode(0)
    pids = {a.ask(_pid, what="pid"), b.ask(_pid, what="pid")}
    assert len(pids) == 2
    with pytest.raises(TimeLimit):
        a.ask(_forever, what="a loop")
    a.close()
    b.close()
    c, d = _episode(7), _episode(7)
    # b's is kept; a's was killed at the limit: a fresh one for the other episode
    assert c.ask(_add, 1, what="add") == d.ask(_add, 1, what="add") == 8
    assert len({c.ask(_pid, what="pid"), d.ask(_pid, what="pid")} & pids) == 1
    c.close()
    d.close()


def test_a_forked_process_forks_its_own():
    kept = _episode(1)
    parent_side = kept.ask(_pid, what="pid")
    kept.close()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            mine = _episode(2)
            os.write(write, str(mine.ask(_pid, what="pid")).encode())
            mine.close()
        finally:
            os._exit(0)
    os.close(write)
    seen = int(os.read(read, 64))
    os.waitpid(child, 0)
    os.close(read)
    assert seen != parent_side
    again = _episode(3)
    assert again.ask(_pid, what="pid") == parent_side and again.ask(_add, 1, what="add") == 4
    again.close()


# a process that keeps a sidecar burning 0.6 s of CPU, then exits (prints the sidecar's pid)
_EXITS_WITH_ONE_KEPT = """
import os, time
from envs.limits import Sidecar
class Tally:
    pass
def _tally():
    return Tally()
def _burn(_):
    t = time.process_time()
    while time.process_time() - t < 0.6:
        pass
    return os.getpid()
s = Sidecar(Tally(), build=(_tally, ()))
print(s.ask(_burn, what="burn"))
s.close()
"""


def test_a_process_waits_for_its_kept_sidecars_at_exit(tmp_path):
    """Kept sidecars end with their process and are its children until then: their CPU is counted
    where a process's children's is (os.wait4, `time`), none outlives it as an orphan."""
    import resource
    import subprocess
    import sys

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path])}
    done = subprocess.run([sys.executable, "-c", _EXITS_WITH_ONE_KEPT], capture_output=True, text=True, env=env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr
    sidecar = int(done.stdout.split()[-1])
    with pytest.raises(ProcessLookupError):  # reaped by its parent before that exited: gone
        os.kill(sidecar, 0)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert cpu >= 0.6  # the sidecar's 0.6 s among it (it was the exiting process's child when reaped)
