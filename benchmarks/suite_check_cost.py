"""The suite check's CPU on a first and a second run of the same grid (issue 67: paid once).

    .venv/bin/python benchmarks/suite_check_cost.py [--suite bank-disputes] [--tasks 1000]

agent:gold plays each task of the grid (harness.suite_check) in a cache folder of its own
(REPAIR_HARNESS_CACHE set to a fresh temporary folder): `first` is a run that finds no verdict (it
plays every task and keeps the verdict), `second` the next run of the same grid (the verdict kept:
it hashes the grid and the code and plays nothing), `unkept` a check that plays every time, as the
check did before its verdicts were kept (and as `suites --verify` still does). CPU time of this
process (time.process_time), per task. No peer's figure: no other harness checks a suite first.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--suite", default="bank-disputes")
    ap.add_argument("--tasks", type=int, default=1000)
    args = ap.parse_args()
    os.environ["REPAIR_HARNESS_CACHE"] = tempfile.mkdtemp(prefix="suite-check-cost-")
    from harness import suite_check, suite_check_cache
    from harness.episodes import select_tasks
    from harness.spec import build_spec, resolved

    plan = resolved(
        build_spec({"suite": args.suite, "models": ["agent:gold"], "conditions": ["raw"], "tasks": args.tasks})
    )
    tasks = select_tasks(plan)
    suite_check_cache.code_hash()  # once per process, as in a run: measured below on its own
    figures = {}
    for name, kept in (("unkept", False), ("first", True), ("second", True)):
        t = time.process_time()
        verdict = asyncio.run(suite_check.check_suite(plan, tasks, kept=kept))
        figures[name] = (time.process_time() - t, verdict.cached)
    suite_check_cache.code_hash.cache_clear()
    t = time.process_time()
    suite_check_cache.code_hash()
    hashing = time.process_time() - t
    print(f"suite check of {args.suite}, {len(tasks):,} tasks (agent:gold, CPU of this process)")
    print(f"{'run':>8} {'cpu s':>8} {'ms/task':>8}  verdict")
    for name, (cpu, cached) in figures.items():
        print(f"{name:>8} {cpu:>8.3f} {cpu / len(tasks) * 1000:>8.3f}  {'kept' if cached else 'played'}")
    print(f"the project's code hash, once per process: {hashing * 1000:.1f} ms")
    print("peers: none (BFCL's runner and inspect_ai check no suite before a run)")


if __name__ == "__main__":
    main()
