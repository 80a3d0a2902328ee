"""CPU an entry of `repair-harness import bfcl`, every process it starts counted.

    .venv/bin/python benchmarks/import_cost.py FOLDER... [--auto] [--rounds 1] [--before PATH]

Each FOLDER (a run's folder of BFCL's published result files, e.g. one of bbrowning/bfcl-vllm-results'
2025-11-12-main and 2025-11-12-harmony-fixes: 1,600 multi-turn entries of gpt-oss-20b and -120b) is
imported into a fresh --out, a process each, as a user runs it (start-up included); `--auto` adds
`--bfcl-version auto` (REPAIR_HARNESS_BFCL_CACHE as set: point it at a cache that holds the releases
the files need, or auto installs them). The CPU of an import is the user + system time of its
process and of every process under it: this one is a child subreaper (Linux), so a process whose
parent left it running (a sidecar left to end at its input's end) is waited for, and counted, here.
With --before, another checkout imports the same folders in the same rounds, and the two imports'
records and transcripts are compared (identical but for the run id, which is drawn per import).
Issue 67's target: <= 10 ms of CPU an entry on the installed release.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PR_SET_CHILD_SUBREAPER = 36


def _subreaper() -> bool:
    """Orphaned descendants reparented to this process (Linux); False where that cannot be."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _cpu(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """CPU seconds of a command with all its descendants, and its wall seconds."""
    start = time.monotonic()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.monotonic() - start
        cpu = usage.ru_utime + usage.ru_stime
        while True:  # the orphans it left, reparented here
            try:
                _, _, left = os.wait4(-1, 0)
            except ChildProcessError:
                break
            cpu += left.ru_utime + left.ru_stime
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd[2:6])} failed: {err.read().decode()[-3000:]}")
    return cpu, wall


def entries(folder: Path) -> int:
    return sum(1 for f in folder.rglob("*_result.json") for line in f.open(encoding="utf-8") if line.strip())


def _normal(value: object, run_ids: set[str]) -> object:
    if isinstance(value, dict):
        return {k: _normal(v, run_ids) for k, v in value.items() if k != "run_id"}
    if isinstance(value, list):
        return [_normal(v, run_ids) for v in value]
    if isinstance(value, str):
        for run_id in run_ids:
            value = value.replace(run_id, "RUN")
    return value


def written(out: Path) -> dict[str, object]:
    """Each run folder's records (sorted) and transcripts (by name), the run id taken out."""
    found: dict[str, object] = {}
    for records in sorted(out.rglob("records.jsonl")):
        lines = [json.loads(line) for line in records.read_text(encoding="utf-8").splitlines()]
        ids = {str(r["run_id"]) for r in lines}
        found[str(records.parent.relative_to(out))] = (
            sorted(json.dumps(_normal(r, ids), sort_keys=True) for r in lines),
            {p.name: _normal(json.loads(p.read_text()), ids) for p in (records.parent / "transcripts").iterdir()},
        )
    return found


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--auto", action="store_true", help="import with --bfcl-version auto")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--before", type=Path, help="another checkout of the harness, measured in the same rounds")
    args = ap.parse_args()
    reaped = _subreaper()
    if not reaped:
        print("(no child subreaper here: a descendant left running by its parent is not counted)")
    trees = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    n = sum(entries(f) for f in args.folders)
    flags = ["--bfcl-version", "auto"] if args.auto else []
    cpu: dict[str, list[float]] = {side: [] for side in trees}
    with tempfile.TemporaryDirectory(prefix="import-cost-") as tmp:
        for r in range(args.rounds):
            for side, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": str(tree)}
                total = 0.0
                for i, folder in enumerate(args.folders):
                    out = Path(tmp) / f"{side}-{r}" / f"{i}-{folder.name}"
                    cmd = [sys.executable, "-m", "harness.cli", "import", "bfcl", str(folder.resolve()), "--out"]
                    seconds, wall = _cpu([*cmd, str(out), *flags], env, tree)
                    print(f"round {r + 1}, {side}: {folder.name}: {seconds:.2f} cpu s, {wall:.1f} wall s", flush=True)
                    total += seconds
                cpu[side].append(total)
        if args.before:
            same = written(Path(tmp) / "after-0") == written(Path(tmp) / "before-0")
    release = "--bfcl-version auto" if args.auto else "the installed release"
    for side, totals in cpu.items():
        median = statistics.median(totals)
        print(f"{side}: {median:.2f} cpu s for {n} entries on {release} = {median / n * 1000:.2f} ms an entry")
    if args.before:
        print("records and transcripts:", "identical but for the run id" if same else "DIFFER")
    print("load average:", " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()
