"""What sending a step's calls to the sidecar in one round trip would save an import (issue 67).

    .venv/bin/python benchmarks/step_round_trips.py FOLDER... [--auto] [--asks 5000]

An import plays each call of a published answer on BFCL's backends in the entry's sidecar
(envs.limits.Sidecar: the time and memory limits on external code), one pipe round trip a call.
Sending an answer's calls together would save a round trip for every call past an answer's first.
This imports the FOLDERs (--auto: with --bfcl-version auto) and counts the answers with calls and
their calls in the records (a prompting model's text decoded as the import decodes it), and measures the
CPU of one round trip (a call that does nothing, --asks of them, both processes' user + system),
so that the saving is a figure beside the import's CPU an entry (benchmarks/import_cost.py).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from envs.limits import Sidecar  # noqa: E402


def counted(folders: list[Path], auto: bool) -> tuple[int, int, int]:
    """Entries, answers with calls, and calls, as the import of the folders reads them (a prompting
    model's text decoded as its handler decodes it): each answer's calls in its record's call log.
    An upper bound of the round trips: a call refused before it runs makes none."""
    entries = answers = calls = 0
    with tempfile.TemporaryDirectory(prefix="step-round-trips-") as tmp:
        for i, folder in enumerate(folders):
            out = Path(tmp) / str(i)
            flags = ["--bfcl-version", "auto"] if auto else []
            cmd = [sys.executable, "-m", "harness.cli", "import", "bfcl", str(folder), "--out", str(out), *flags]
            subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for records in out.rglob("records.jsonl"):
                for line in records.read_text(encoding="utf-8").splitlines():
                    entries += 1
                    for answer in json.loads(line)["calls"]:
                        n = len(answer.get("call_outcomes") or [])
                        answers += n > 0
                        calls += n
    return entries, answers, calls


def _nothing(host: Any, i: int) -> int:
    return i


def round_trip_cpu(asks: int) -> float:
    """CPU seconds of one round trip to a sidecar, this process's and the sidecar's."""
    sidecar = Sidecar(object())
    before = resource.getrusage(resource.RUSAGE_SELF)
    for i in range(asks):
        sidecar.ask(_nothing, i, what="a call that does nothing")
    after = resource.getrusage(resource.RUSAGE_SELF)
    pid = sidecar.pid
    sidecar.close()
    _, _, theirs = os.wait4(pid, 0)
    ours = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return (ours + theirs.ru_utime + theirs.ru_stime) / asks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--asks", type=int, default=5000)
    ap.add_argument("--auto", action="store_true", help="import with --bfcl-version auto")
    args = ap.parse_args()
    entries, answers, calls = counted(args.folders, args.auto)
    each = round_trip_cpu(args.asks)
    saved = calls - answers
    print("peers: none (BFCL's runner runs a model's calls in its own process, with no limit on them)")
    print(f"one sidecar round trip: {each * 1e6:.1f} us of CPU (both processes; {args.asks} asks)")
    print(
        f"{entries} entries: {calls} calls in {answers} answers with calls; one round trip an answer saves "
        f"{saved} round trips = {saved * each * 1000:.2f} ms of CPU, {saved * each / max(entries, 1) * 1e6:.1f} us"
        " an entry"
    )


if __name__ == "__main__":
    main()
