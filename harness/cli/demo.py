"""`demo`, the README's main job: a small real ablation of the paper's conditions on the CPU model."""

from __future__ import annotations

from pathlib import Path

import typer

from common import study
from harness.agents import AGENTS
from harness.backends.local import LOCAL_MODEL
from harness.cli.common import group, print_reports, run_spec
from harness.cli.reproduce import PAPER_ENV
from harness.spec import build_spec

app = group()


@app.command("demo")
def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out"),
    bank_tasks: int = typer.Option(2, help="bank-disputes tasks"),
    games: int = typer.Option(2, help="paper-textworld games"),
    max_tokens: int = typer.Option(128, help=f"output tokens per call (the paper: {study.MAX_TOKENS})"),
) -> None:
    """The main job: a small real ablation of the paper's conditions on the embedded CPU model.

    Sized for 2 CPU cores (about 10 minutes: SmolLM2-135M evaluates ~150 prompt tokens/s and
    writes ~15 tokens/s here); raise --bank-tasks / --games for more.
    """
    # the reference agents (instant) play the same episodes: the conditions' ceilings beside the model
    common = {"models": [LOCAL_MODEL, *AGENTS], "conditions": list(study.CONDITIONS), "budgets": [study.BUDGET],
              "concurrency": 1, "decoding": {"temperature": 0.0, "max_tokens": max_tokens}}
    specs = [
        build_spec({**common, "suite": "bank-disputes", "tasks": bank_tasks, "tool_mode": "prompt",
                    "out": str(out / "bank")}, source="demo"),
        build_spec({**common, "suite": "paper-textworld", "tasks": games, "feedback_cut": study.CUT,
                    "env_options": dict(PAPER_ENV), "out": str(out / "textworld")}, source="demo"),
    ]
    for spec in specs:
        run_spec(spec)
    print_reports([Path(s.out) for s in specs])
