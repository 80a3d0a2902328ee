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

Then what a researcher pays for: precision on a condition difference. For the first two
conditions (A - B), each design's paired contrast as the report computes it (its bootstrap 95% CI),
and its cost: the model calls (and tokens) its A and B episodes spent, and the calls that a CI
half-width of one point would take, calls x half-width^2 (a half-width shrinks as 1/sqrt(n) and the
cost grows as n). The fork's difference is the repair's, given the failure; the full grid's is the
whole episode's, over every task.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from results import load  # after the repository is on the path
from results.contrasts import contrasts
from results.load import read_records


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
    print("peers: none (BFCL's runner and inspect_ai start no episode at a recorded call: they play the full grid)")
    a_b = a.conditions.split(",")[:2]
    if len(a_b) == 2:
        print(f"precision on {a_b[0]} - {a_b[1]} (bootstrap 95% CI, the report's paired test)")
        head = f"{'design':<12}{'pairs':>7}{'diff pts':>10}{'half-width':>12}{'calls':>9}{'tokens':>10}"
        print(head + f"{'calls for +-1 pt':>18}")
        for name, folder in (("full grid", full), ("fork", fork)):
            _precision(name, folder, a_b[0], a_b[1])


def _precision(name: str, folder: Path, a: str, b: str) -> None:
    df = load(folder)
    row = contrasts(df, [(a, b)]).table.iloc[0]
    spent = df[df["condition"].isin([a, b])]
    calls = float(spent["model_calls"].sum())
    tokens = float((spent["prompt_tokens"].fillna(0) + spent["completion_tokens"].fillna(0)).sum())
    half = 100 * (row["ci_high"] - row["ci_low"]) / 2
    per_point = f"{calls * half**2:,.0f}" if half > 0 else "— (no spread)"
    print(
        f"{name:<12}{int(row['n_pairs']):>7}{100 * row['diff']:>+10.1f}{half:>12.2f}{calls:>9,.0f}{tokens:>10,.0f}"
        f"{per_point:>18}"
    )


if __name__ == "__main__":
    main()
