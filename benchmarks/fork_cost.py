"""What a fork saves: model calls, tokens and wall time per paired observation, fork vs full grid.

    python benchmarks/fork_cost.py OUT --suite bank-disputes --model agent:reader --tasks 50
    python benchmarks/fork_cost.py OUT --suite bank-disputes --model local --tasks 2 --conditions raw,allowed_json

It plays, through the CLI as a user would: a source (`--source-condition`, default none), a fork
of its failures under `--conditions`, and the full grid of the same conditions from the start.
A paired observation is one failure seen under one condition: the fork plays one episode for it,
the full grid one whole episode. Printed per arm: episodes, model calls, tokens (reference agents
spend none) and wall time, each per observation, and what the fork saved (the prefix: the calls
before the failure, which the full grid pays again under every condition). The full grid's
figures count the episodes whose source failed, the ones a fork can pair; its wall time is the
whole grid's, scaled to those episodes.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from results.load import read_records  # after the repository is on the path


def _cli(*args: str) -> float:
    started = time.perf_counter()
    cmd = [sys.executable, "-m", "harness.cli", *args]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode not in (0, 4):
        sys.exit(f"{' '.join(args[:2])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def _figures(rows: list[dict[str, Any]], wall: float, share: float) -> dict[str, float]:
    n = max(len(rows), 1)
    tokens = [(r["prompt_tokens"] or 0) + (r["completion_tokens"] or 0) for r in rows]
    return {
        "episodes": len(rows),
        "calls": sum(r["model_calls"] for r in rows) / n,
        "tokens": sum(tokens) / n,
        "wall_ms": 1000 * wall * share / n,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--suite", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--tasks", default="20")
    p.add_argument("--conditions", default="raw,loc_obs,allowed_json")
    p.add_argument("--source-condition", default="none")
    p.add_argument("--env", action="append", default=[])
    p.add_argument("--temperature", default="0", help="sampling temperature of source and grid (the fork keeps it)")
    a = p.parse_args()
    envs = [x for e in a.env for x in ("--env", e)]
    common = ["--suite", a.suite, "--model", a.model, "--tasks", a.tasks, "--temperature", a.temperature, *envs]
    src, fork, full = a.out / "source", a.out / "fork", a.out / "full"
    _cli("run", *common, "--conditions", a.source_condition, "--out", str(src), "--no-preflight")
    fork_wall = _cli("fork", str(src), "--conditions", a.conditions, "--out", str(fork), "--no-preflight")
    full_wall = _cli("run", *common, "--conditions", a.conditions, "--out", str(full), "--no-preflight")
    forks = [r for r in read_records(fork)[0] if r["success"] is not None]
    failed = {r["task_id"] for r in read_records(src)[0] if r["invalid_calls"]}
    whole_all = [r for r in read_records(full)[0] if r["success"] is not None]
    whole = [r for r in whole_all if r["task_id"] in failed]
    f = _figures(forks, fork_wall, 1.0)
    g = _figures(whole, full_wall, len(whole) / max(len(whole_all), 1))
    prefix = sum(r["prefix_calls"] for r in forks) / max(len(forks), 1)
    print(f"{a.suite}, {a.model}: {len(failed)} failed source episodes, conditions {a.conditions}")
    print(f"{'per observation':<16}{'episodes':>10}{'model calls':>13}{'tokens':>10}{'wall ms':>10}")
    for name, x in (("full grid", g), ("fork", f)):
        print(f"{name:<16}{x['episodes']:>10}{x['calls']:>13.2f}{x['tokens']:>10.0f}{x['wall_ms']:>10.1f}")
    print(
        f"the fork replayed {prefix:.2f} calls per observation without paying for them; "
        f"calls saved {1 - f['calls'] / g['calls']:.0%}"
        + (f", tokens saved {1 - f['tokens'] / g['tokens']:.0%}" if g["tokens"] else "")
        if g["calls"]
        else "no paired observation"
    )


if __name__ == "__main__":
    main()
