"""The CPU a command costs, as the benchmarks count it: user + system seconds of its process and of
the children it waited for (os.wait4); with `orphans`, also those it left running, reparented to
this process when it is a child subreaper (`subreaper`)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import tempfile
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def subreaper() -> bool:
    """Orphaned descendants reparented to this process (Linux); False where that cannot be."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def command_cpu(cmd: list[str], env: dict[str, str], cwd: Path, orphans: bool = False) -> tuple[float, float, str]:
    """CPU seconds of a command (with `orphans`: every child this process has once it ends, which must
    be only the command's), its wall seconds and its stderr; SystemExit with its stderr's end if it fails."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        cpu = usage.ru_utime + usage.ru_stime
        while orphans:  # the orphans it left, reparented here
            try:
                _, _, left = os.wait4(-1, 0)
            except ChildProcessError:
                break
            cpu += left.ru_utime + left.ru_stime
        err.seek(0)
        said = err.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(cmd[:6])} failed: {said[-3000:]}")
    return cpu, wall, said
