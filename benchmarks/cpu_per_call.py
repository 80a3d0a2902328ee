"""Marginal CPU of a model call: the harness beside BFCL's own runner, on one fake server.

    .venv/bin/python benchmarks/cpu_per_call.py [--rounds 3] [--small 200] [--large 800]
        [--before PATH]   (another checkout of the harness, measured in the same rounds)

The server: benchmarks/stand_in_server.py's stand-in (latency 0, one fixed chat completion with a native
call, no model work). Each client plays --small and then --large single-call episodes as a user
runs it, a fresh process each:
- the harness: `repair-harness run` (bank-disputes, budget 1, native tools, concurrency 32,
  --no-preflight: the stand-in fails the preflight by design; the suite check on, as `run`
  defaults);
- BFCL's runner: `bfcl generate` of the installed bfcl-eval, through tests/bfcl_runner.py, on its
  OpenAI chat-completions handler (FC, 32 threads), on as many of BFCL's single-turn entries (one
  request each), a quarter from each of simple_python, multiple, parallel and parallel_multiple: the
  same mix at both sizes (three of them hold 200 entries: 800 at most; issue 67 measured 1,000
  minus 200);
- inspect_ai (--no-inspect leaves it out): `eval` of as many one-message samples through its
  OpenAI-compatible provider (`openai-api/bench/...`, 32 connections, generate(tool_calls="none"): the
  stand-in always answers with a call, which inspect's default loop would answer and ask again),
  its log written as a user's is.
The CPU of a process is its user + system time with its children (os.wait4); the marginal CPU of a
call is (CPU(large) - CPU(small)) / (large - small): start-up and imports cancel out. The clients run
interleaved in each round; the figures are medians over the rounds, and the ratio is the harness's
over BFCL's (issue 67's target: <= 0.75). With --before, a second harness checkout plays in the same
rounds.

The suite check's verdict is kept between runs (harness.suite_check_cache): the first round pays
it, the later rounds do not (a checkout from before the cache pays it every run);
REPAIR_HARNESS_CACHE points at a fresh folder per checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.process_cpu import command_cpu  # noqa: E402
from benchmarks.stand_in_server import MODEL, start_server  # noqa: E402

# BFCL's single-turn categories of one request per entry, in the order their entries are taken
BFCL_SINGLE = (("simple_python", 400), ("multiple", 200), ("parallel", 200), ("parallel_multiple", 200))


def harness_cpu(tree: Path, url: str, n: int, cache: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "REPAIR_HARNESS_CACHE": str(cache), "OPENAI_API_KEY": ""}
    with tempfile.TemporaryDirectory(prefix="cpu-per-call-") as out:
        cmd = [sys.executable, "-m", "harness.cli", "run", "--suite", "bank-disputes", "--model", MODEL]
        cmd += ["--endpoint", url, "--conditions", "allowed_json", "--tool-mode", "native", "--budget", "1"]
        cmd += ["--no-preflight", "--concurrency", "32", "--env", f"n_tasks={n}", "--out", f"{out}/run"]
        return command_cpu(cmd, env, tree)[0]


def bfcl_ids(n: int) -> dict[str, list[str]]:
    """n of BFCL's single-turn entries, a quarter from each category: the same mix at every size, so
    that the difference of two sizes is calls of one kind (the categories' requests differ in size)."""
    if n % len(BFCL_SINGLE) or n // len(BFCL_SINGLE) > min(size for _, size in BFCL_SINGLE):
        most = len(BFCL_SINGLE) * min(size for _, size in BFCL_SINGLE)
        raise SystemExit(f"BFCL's runner plays a multiple of {len(BFCL_SINGLE)} entries up to {most} here, not {n}")
    return {category: [f"{category}_{i}" for i in range(n // len(BFCL_SINGLE))] for category, _ in BFCL_SINGLE}


def bfcl_cpu(url: str, n: int) -> float:
    from tests.bfcl_runner import command, environment

    with tempfile.TemporaryDirectory(prefix="cpu-per-call-bfcl-") as work:
        Path(work, "test_case_ids_to_generate.json").write_text(json.dumps(bfcl_ids(n)))
        env = environment(work, OPENAI_BASE_URL=url, OPENAI_API_KEY="none")
        cmd = [*command(served=MODEL), "generate", "--model", f"{MODEL}-FC", "--run-ids", "--num-threads", "32"]
        cpu = command_cpu(cmd, env, Path(work))[0]
        written = sum(len(p.read_text().splitlines()) for p in Path(work, "result").rglob("*_result.json"))
        if written != n:
            raise SystemExit(f"BFCL's runner wrote {written} results, not {n}")
        return cpu


# inspect_ai's eval as a user writes it: one generate per sample (tool_calls="none": the stand-in
# always answers with a call, which inspect's default loop would answer and ask again, forever)
INSPECT_EVAL = """
import sys, tempfile
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import generate
n, url = int(sys.argv[1]), sys.argv[2]
task = Task(dataset=[Sample(input=f"Customer {i}: please open a dispute.") for i in range(n)],
            solver=generate(tool_calls="none"))
with tempfile.TemporaryDirectory() as logs:
    log = eval(task, model="openai-api/bench/" + sys.argv[3], model_base_url=url, max_connections=32,
               log_dir=logs, display="none", max_retries=0)[0]
    if log.status != "success" or len(log.samples or []) != n:
        sys.exit(f"inspect_ai's eval ended {log.status} with {len(log.samples or [])} of {n} samples: {log.error}")
"""


def inspect_cpu(url: str, n: int) -> float:
    """inspect_ai (a peer): `eval` of n one-message samples through its OpenAI-compatible provider,
    32 connections, in a fresh process, its log written as a user's is."""
    env = {**os.environ, "BENCH_API_KEY": "none"}
    return command_cpu([sys.executable, "-c", INSPECT_EVAL, str(n), url, MODEL], env, Path(tempfile.gettempdir()))[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--small", type=int, default=200)
    ap.add_argument("--large", type=int, default=800)
    ap.add_argument("--before", type=Path, help="another checkout of the harness, measured beside this one")
    ap.add_argument("--no-inspect", action="store_true", help="leave inspect_ai (a peer) out")
    args = ap.parse_args()
    proc, url = start_server(0.0)
    caches = Path(tempfile.mkdtemp(prefix="cpu-per-call-cache-"))
    clients = {"harness": lambda n: harness_cpu(ROOT, url, n, caches / "after")}
    if args.before:
        clients = {"before": lambda n: harness_cpu(args.before.resolve(), url, n, caches / "before"), **clients}
    clients["bfcl"] = lambda n: bfcl_cpu(url, n)
    if not args.no_inspect:
        clients["inspect"] = lambda n: inspect_cpu(url, n)
    marginal: dict[str, list[float]] = {name: [] for name in clients}
    try:
        for r in range(args.rounds):
            names = list(clients)
            for name in names[r % len(names) :] + names[: r % len(names)]:
                small, large = clients[name](args.small), clients[name](args.large)
                marginal[name].append((large - small) / (args.large - args.small) * 1000)
                each = marginal[name][-1]
                print(f"round {r + 1} {name:>8}: {small:6.2f} / {large:6.2f} cpu s -> {each:.3f} ms a call")
    finally:
        proc.terminate()
    print(f"\nmarginal CPU of a call, ms (median of {args.rounds} interleaved rounds; {time.strftime('%H:%M')} UTC)")
    medians = {name: statistics.median(v) for name, v in marginal.items()}
    for name, value in medians.items():
        label = {
            "before": f"harness at {args.before}",
            "harness": "harness (this checkout)",
            "bfcl": "BFCL's runner",
            "inspect": "inspect_ai (eval, 32 connections)",
        }[name]
        print(f"{label:>40}: {value:.3f}  (rounds: {', '.join(f'{v:.3f}' for v in marginal[name])})")
    for name in ("before", "harness"):
        if name in medians:
            ratio = medians[name] / medians["bfcl"]
            print(f"{name:>8} / BFCL's runner: {ratio:.2f} (target <= 0.75: {'PASS' if ratio <= 0.75 else 'FAIL'})")
    if "inspect" in medians:
        print(f" harness / inspect_ai: {medians['harness'] / medians['inspect']:.2f}")


if __name__ == "__main__":
    main()
