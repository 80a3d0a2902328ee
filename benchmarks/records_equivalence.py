"""Do two versions of the harness write the same records? A refactor's check.

    python benchmarks/records_equivalence.py play OUT [--tasks 4]      # every suite x gold, reader
    python benchmarks/records_equivalence.py compare OUT_BEFORE OUT_AFTER

`play` runs, per suite (and per protocol of the TextWorld suites), `agent:gold` and
`agent:reader` under every condition the suite can play, through the CLI as a user would, then
forks some of those runs with `agent:reader` under other conditions (FORKS). The
reference agents call no model, so the records are a function of the code alone. `compare`
reads each pair of `records.jsonl` and says, per run, whether the records are byte-identical
once what differs by construction is set aside: the run id, the timings (`latency_s`, per call
too) and the fields named with `--ignore` (a field a change adds on purpose). It exits 1 on the
first difference and prints the key and the fields that differ.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# suite (and --env), the conditions it plays
RUNS: dict[str, tuple[list[str], list[str]]] = {
    "bank-disputes": (["--suite", "bank-disputes"], []),
    "paper-textworld-plan": (["--suite", "paper-textworld"], []),
    "paper-textworld-step": (["--suite", "paper-textworld", "--env", "protocol=step"], []),
    "paper-textworld-veriharness": (
        ["--suite", "paper-textworld", "--env", "protocol=veriharness"],
        ["raw", "loc_obs", "allowed_prose", "allowed_json"],
    ),
    "textworld": (["--suite", "textworld", "--env", "seeds=7..12"], []),
    "tools-bank": (["--suite", "tools-bank"], []),
    "tools-travel": (["--suite", "tools-travel", "--env", "contract=strict"], []),
    "tools-calendar": (["--suite", "tools-calendar"], []),
    # BFCL's multi-turn suites need bfcl-eval (the test command installs it)
    **{f"bfcl-{c}": (["--suite", f"bfcl-{c}"], []) for c in ("base", "miss-param", "miss-func", "long-context")},
}
# forks of some of those runs (`fork SOURCE --model agent:reader`): the replayed prefix, the rebuilt
# state and the repair under other conditions go through the loop too
FORKS: dict[str, list[str]] = {
    "bank-disputes": ["raw", "allowed_json", "retry+location+allowed@problem"],
    "tools-bank": ["loc_obs", "allowed_prose"],
    "tools-calendar": ["raw", "allowed_json"],
    "bfcl-base": ["raw", "allowed_json"],
}
ALL = ["none", "traceback", "raw", "loc_obs", "allowed_prose", "allowed_json", "self_check", "self_check_wait"]
FAULTS = ["fault_raw", "fault_problem"]
TIMINGS = {"latency_s", "run_id"}  # the run id and the timings differ by construction


def play(out: Path, tasks: int) -> None:
    for name, (flags, conditions) in RUNS.items():
        conds = conditions or ALL + (FAULTS if name.startswith("tools-") else [])
        cmd = [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            *flags,
            "--model",
            "agent:gold,agent:reader",
            "--conditions",
            ",".join(conds),
            "--tasks",
            str(tasks),
            "--out",
            str(out / name),
        ]
        t0 = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True)
        print(f"{name:<30} exit {done.returncode} in {time.monotonic() - t0:.1f} s", flush=True)
        if done.returncode not in (0,):
            print(done.stderr[-3000:])
            raise SystemExit(1)
    for name, conds in FORKS.items():
        cmd = [sys.executable, "-m", "harness.cli", "fork", str(out / name), "--model", "agent:reader"]
        cmd += ["--conditions", ",".join(conds), "--out", str(out / f"{name}-fork")]
        t0 = time.monotonic()
        done = subprocess.run(cmd, capture_output=True, text=True)
        print(f"{name + '-fork':<30} exit {done.returncode} in {time.monotonic() - t0:.1f} s", flush=True)
        if done.returncode != 0:
            print(done.stderr[-3000:])
            raise SystemExit(1)


def _unsourced(record: dict[str, Any]) -> dict[str, Any]:
    """A fork's record without its source's run id, which differs by construction between two
    plays of the source: in the fork point's id, in `fork_of` and in the transcript's name (a
    hash of the key)."""
    if not record.get("fork") or record.get("fork") == "none":
        return record
    out = dict(record, fork=record["fork"].split(":", 1)[1], transcript=None)
    out["fork_of"] = {k: v for k, v in (record.get("fork_of") or {}).items() if k != "run_id"}
    return out


def _normal(record: dict[str, Any], ignore: set[str]) -> dict[str, Any]:
    record = _unsourced(record)
    out = {k: v for k, v in record.items() if k not in TIMINGS | ignore}
    out["calls"] = [{k: v for k, v in c.items() if k not in TIMINGS | ignore} for c in record.get("calls", [])]
    return out


def _key(record: dict[str, Any]) -> tuple:
    record = _unsourced(record)
    return tuple(
        record.get(k, "none")
        for k in ("suite", "task_id", "model", "condition", "budget", "sample_seed", "constrain", "fork")
    )


def compare(before: Path, after: Path, ignore: set[str]) -> int:
    failed = 0
    for name in [*RUNS, *(f"{n}-fork" for n in FORKS)]:
        a, b = before / name / "records.jsonl", after / name / "records.jsonl"
        ra = {_key(r): r for r in map(json.loads, a.read_text().splitlines())}
        rb = {_key(r): r for r in map(json.loads, b.read_text().splitlines())}
        if set(ra) != set(rb):
            print(f"{name}: different episodes ({len(ra)} vs {len(rb)})")
            failed += 1
            continue
        differ = []
        for key in sorted(ra):
            x, y = _normal(ra[key], ignore), _normal(rb[key], ignore)
            if json.dumps(x, sort_keys=True) != json.dumps(y, sort_keys=True):
                fields = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
                differ.append((key, fields))
        print(f"{name:<30} {len(ra):>4} records: " + ("identical" if not differ else f"{len(differ)} differ"))
        for key, fields in differ[:3]:
            print(f"   {key}: {', '.join(fields)}")
        failed += bool(differ)
    return 1 if failed else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("play")
    p.add_argument("out", type=Path)
    p.add_argument("--tasks", type=int, default=4)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--ignore", default="", help="comma-separated record fields a change adds or alters on purpose")
    args = ap.parse_args()
    print("peers: none (a check of this harness's own records, one version against another)", flush=True)
    if args.cmd == "play":
        play(args.out, args.tasks)
    else:
        raise SystemExit(compare(args.before, args.after, {f for f in args.ignore.split(",") if f}))


if __name__ == "__main__":
    main()
