"""Sidecars kept between episodes (envs.limits.Sidecar with `build`): one whose episode closed in
good order waits here for the next episode, by the memory limit it was forked under. They are one
per worker that plays at once, and end with this process (envs.limits closes their input and waits
for them at its exit). A process forked from this one forgets them: they are its parent's."""

from __future__ import annotations

import threading

# memory limit (MiB) -> (pid, request pipe, answer pipe) of each kept sidecar
_kept: dict[int, list[tuple[int, int, int]]] = {}
_lock = threading.Lock()


def take(mib: int) -> tuple[int, int, int] | None:
    with _lock:
        return _kept[mib].pop() if _kept.get(mib) else None


def keep(mib: int, sidecar: tuple[int, int, int]) -> None:
    with _lock:
        _kept.setdefault(mib, []).append(sidecar)


def drain() -> list[tuple[int, int, int]]:
    """Every kept sidecar, none kept any more (this process is exiting)."""
    with _lock:
        out = [sidecar for sidecars in _kept.values() for sidecar in sidecars]
        _kept.clear()
    return out


def forget() -> list[int]:
    """In a forked child: nothing kept (the lock too may have been held by a thread at the fork);
    the pipes it held, for the caller to close."""
    global _lock
    _lock = threading.Lock()
    fds = [fd for sidecars in _kept.values() for _, requests, answers in sidecars for fd in (requests, answers)]
    _kept.clear()
    return fds
