"""Time and peak memory of `report --format json` on 1k / 10k / 100k / 1M records, vs the targets.

    .venv/bin/python benchmarks/report_scale.py [--sizes 1000,10000,100000] [--dir /tmp/report-scale]
    .venv/bin/python benchmarks/report_scale.py --sizes 1000000     (issue 67's size: 1.5 GB of records)

No peer's figure: no other harness reports these records.

SYNTHETIC RECORDS: this measures our analysis code, not a model. The records are written by
`synthetic_records` below from a fixed-seed generator (no model, no server was involved); their
success rates are arbitrary and no figure derived from them may appear as a result anywhere.

The shape, chosen so that every path of the report runs at scale:
- model `qwen2.5-coder-14b-awq` (a preset with published cells): sample seed 0, so its
  contrasts take the paired lane (pair bootstrap + exact McNemar);
- model `local`: sample seeds 3101/3102/3103 (the sampling lane: task-cluster bootstrap and
  sign-flip tests);
- the paper's four conditions, budget 4, suite paper-textworld, ~1% harness errors (unpaired
  episodes), 1-4 model calls per episode with one call log each, as the harness writes them.

Each size runs `python -m harness.cli report DIR --format json` in a fresh subprocess, as a
user would; the wall time includes the interpreter start and every import, and the peak memory
is the child's maximum resident set size (`os.wait4`).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET_S = 15.0  # for 100,000 records (issue 15)
TARGET_MB = 1024.0
# issue 67: a million records (10 models x 20 conditions x 1,000 tasks x 5 seeds) in 30 s and 1 GB
TARGETS = {1_000_000: (30.0, 1024.0)}
CONDITIONS = ("raw", "loc_obs", "allowed_prose", "allowed_json")
# arbitrary solve probabilities per condition: they only make the contrasts non-trivial
P_SOLVE = {"raw": 0.3, "loc_obs": 0.35, "allowed_prose": 0.6, "allowed_json": 0.65}
LANES = (("qwen2.5-coder-14b-awq", (0,)), ("local", (3101, 3102, 3103)))
BUDGET = 4
RUN_ID = "synthetic-report-scale"


def _call(outcome: str, rng: random.Random) -> dict:
    return {
        "kind": "action",
        "prompt_tokens": rng.randint(600, 1400),
        "completion_tokens": rng.randint(10, 80),
        "latency_s": round(rng.uniform(0.2, 2.0), 4),
        "finish_reason": "stop",
        "prompt_words": rng.randint(400, 900),
        "parse_modes": ["json"],
        "fenced": False,
        "truncated": False,
        "outcome": outcome,
    }


def _record(model: str, seed: int, task: int, cond: str, rng: random.Random) -> dict:
    error = rng.random() < 0.01
    success = None if error else rng.random() < P_SOLVE[cond]
    n_calls = 0 if error else (rng.randint(1, BUDGET) if success else BUDGET)
    calls = [_call("won" if success and i == n_calls - 1 else "invalid_action", rng) for i in range(n_calls)]
    codes = [c["outcome"] for c in calls if c["outcome"] != "won"]
    return {
        "schema_version": 1,
        "run_id": RUN_ID,
        "suite": "paper-textworld",
        "task_id": f"g{task:06d}",
        "model": model,
        "condition": cond,
        "budget": BUDGET,
        "sample_seed": seed,
        "condition_params": {"feedback": cond, "arbiter": "validator", "cut": 240, "env": {}, "tool_mode": "prompt"},
        "config": {
            "decoding": {
                "temperature": 0.3 if seed else 0.0,
                "top_p": 0.9 if seed else 1.0,
                "max_tokens": 512,
                "seed": seed or None,
            },
            "tool_mode": "prompt",
        },
        "model_id": model,
        "success": success,
        "end_reason": "harness_error" if error else ("won" if success else "budget"),
        "limit_hit": not error and not success,
        "model_calls": n_calls,
        "action_calls": n_calls,
        "review_calls": 0,
        "tool_calls": n_calls,
        "invalid_calls": len(codes),
        "first_call_valid": None if error else n_calls == 1 and bool(success),
        "repaired": bool(success and n_calls > 1),
        "failure_codes": codes,
        "final_failure": None if success or error else "invalid_action",
        "prompt_tokens": sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": sum(c["completion_tokens"] for c in calls),
        "prompt_words": sum(c["prompt_words"] for c in calls),
        "latency_s": round(sum(c["latency_s"] for c in calls), 4),
        "fenced_answers": 0,
        "calls": calls,
        "extra": {"protocol": "plan"},
        "harness_error": "HTTP 500 after 4 retries" if error else None,
        "transcript": f"transcripts/{model[:4]}-{seed}-{task}-{cond}.json",
    }


def synthetic_records(n: int, seed: int = 15):
    """About n records (a whole number of tasks per lane), half per model; see the module docstring."""
    rng = random.Random(seed)
    for model, seeds in LANES:
        tasks = max(1, round(n / len(LANES) / len(CONDITIONS) / len(seeds)))
        for task in range(tasks):
            for s in seeds:
                for cond in CONDITIONS:
                    yield _record(model, s, task, cond, rng)


def write_run(run_dir: Path, n: int) -> int:
    """records.jsonl + run.json in run_dir (reused when already written for n); the record count."""
    run_dir.mkdir(parents=True, exist_ok=True)
    stamp = run_dir / "synthetic.json"
    if stamp.exists() and json.loads(stamp.read_text()).get("n") == n:
        return json.loads(stamp.read_text())["records"]
    from harness.types import EpisodeRecord

    count = 0
    with open(run_dir / "records.jsonl", "w", encoding="utf-8") as f:
        for rec in synthetic_records(n):
            if count < 50:  # the generator must keep to the schema the harness writes
                EpisodeRecord(**rec)
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
            count += 1
    spec = {
        "suite": "paper-textworld",
        "models": [m for m, _ in LANES],
        "conditions": list(CONDITIONS),
        "budgets": [BUDGET],
        "sample_seeds": sorted({s for _, seeds in LANES for s in seeds}),
    }
    (run_dir / "run.json").write_text(json.dumps({"run_id": RUN_ID, "synthetic": True, "spec": spec}))
    stamp.write_text(
        json.dumps({"n": n, "records": count, "note": "synthetic records from benchmarks/report_scale.py"})
    )
    return count


def measure(run_dir: Path) -> tuple[float, float, float, int]:
    """Wall seconds, CPU seconds, peak RSS in MB and output bytes of one `report --format json`
    subprocess. CPU time is shown beside wall time because the machine is shared: under load the
    wall time grows with the other processes' work, the CPU time much less."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.cli", "report", str(run_dir), "--format", "json"],
            stdout=out,
            stderr=err,
            env=env,
            cwd=ROOT,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"report failed on {run_dir} (exit {proc.returncode}): {err.read().decode()[-2000:]}")
        size = out.tell()
    # ru_maxrss is in KiB on Linux
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="record counts, comma-separated")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "repair-harness-report-scale")
    parser.add_argument("--repeats", type=int, default=1, help="runs per size; the fastest is shown")
    args = parser.parse_args()
    print("synthetic records (benchmarks/report_scale.py generator, no model): measures the analysis code only")
    print("peers: none (no other harness reports these records; BFCL's evaluate scores its own result files)")
    print(f"targets: 100,000 records <= {TARGET_S:.0f} s, <= {TARGET_MB:.0f} MB peak; 1,000,000 <= 30 s, <= 1024 MB\n")
    print(
        f"{'records':>9} {'write s':>8} {'report s':>9} {'cpu s':>6} {'peak MB':>8} {'json KB':>8} "
        f"{'s/target':>9} {'MB/target':>10}"
    )
    for n in (int(s) for s in args.sizes.split(",")):
        run_dir = args.dir / f"n{n}"
        t = time.perf_counter()
        count = write_run(run_dir, n)
        written = time.perf_counter() - t
        runs = [measure(run_dir) for _ in range(args.repeats)]
        wall, cpu, peak, size = min(runs)
        target_s, target_mb = TARGETS.get(n, (TARGET_S, TARGET_MB))
        print(
            f"{count:>9,} {written:>8.1f} {wall:>9.2f} {cpu:>6.2f} {peak:>8.0f} {size / 1024:>8.0f} "
            f"{wall / target_s:>9.2f} {peak / target_mb:>10.2f}",
            flush=True,
        )
    print(
        "\nratios are figure / target (<= 1.00 meets it): a million records against issue 67's, the others 100,000's;"
        f" fastest of {args.repeats} run(s) per size; wall and cpu include the interpreter start and imports"
    )


if __name__ == "__main__":
    main()
