"""`demo`, the README's main job: a small real ablation of the paper's conditions on the CPU model."""

from __future__ import annotations

from pathlib import Path

import typer

from envs import study
from harness.cli.common import EXIT_SERVER, echo, group, print_report, run_spec
from harness.cli.reproduce import PAPER_ENV

app = group()


@app.command("demo")
def demo(
    out: Path = typer.Option(
        Path("runs/demo"), "--out", help="folder of the two run directories, bank/ and textworld/"
    ),
    bank_tasks: int = typer.Option(2, min=1, help="bank-disputes tasks"),
    games: int = typer.Option(2, min=1, help="paper-textworld games"),
    max_tokens: int = typer.Option(128, min=1, help=f"output tokens per call (the paper: {study.MAX_TOKENS})"),
    retry_errors: bool = typer.Option(
        False, "--retry-errors", help="play again the episodes recorded as harness errors"
    ),
) -> None:
    """The main job: a small real ablation of the paper's conditions on the embedded CPU model.

    Plays 2 bank tasks and 2 paper games under 4 conditions (16 episodes; 10 to 30 minutes on 2
    CPU cores, depending on their load), then prints one report over both. Rerun the same command
    to resume. It first checks that the embedded model can run here (`repair-harness doctor`).
    """
    check_embedded_model()
    # the reference agents (instant) play the same episodes: the conditions' ceilings beside the model
    from harness.agents import AGENTS  # here: listing and help import no agent, env or pydantic
    from harness.backends.local import LOCAL_MODEL
    from harness.spec import build_spec

    common = {
        "models": [LOCAL_MODEL, *AGENTS],
        "conditions": list(study.CONDITIONS),
        "budgets": [study.BUDGET],
        "concurrency": 1,
        "decoding": {"temperature": 0.0, "max_tokens": max_tokens},
    }
    specs = [
        build_spec(
            {**common, "suite": "bank-disputes", "tasks": bank_tasks, "tool_mode": "prompt", "out": str(out / "bank")},
            source="demo",
        ),
        build_spec(
            {
                **common,
                "suite": "paper-textworld",
                "tasks": games,
                "feedback_cut": study.CUT,
                "env_options": dict(PAPER_ENV),
                "out": str(out / "textworld"),
            },
            source="demo",
        ),
    ]
    from results.grid import write_plan

    # both halves named before the first plays: a report on the folder of a demo stopped halfway
    # names the half that never ran
    write_plan(out, [(Path(s.out).name, s.identity()) for s in specs])
    for spec in specs:
        run_spec(spec, retry_errors=retry_errors)
    dirs = [Path(s.out) for s in specs]
    print_report(dirs)
    echo("\n".join(next_steps(specs)))


def check_embedded_model() -> None:
    """`doctor`'s verdict, before any episode: a build this CPU cannot run stops here (exit 3),
    saying why and what fixes it, instead of killing the server mid-run."""
    from rich.markup import escape

    from harness.cli.common import console
    from harness.cli.doctor import diagnose

    err = console(stderr=True)
    d = diagnose()
    if d.runs:
        err.print(f"doctor: {d.summary}", highlight=False)
        return
    err.print("\n".join(d.lines), highlight=False, markup=False)
    err.print(
        f"[red]stopped:[/red] {escape(d.summary)}\nfix: {escape(d.fix or '')}\nthen rerun: repair-harness demo",
        highlight=False,
    )
    raise typer.Exit(EXIT_SERVER)


def next_steps(specs: list) -> list[str]:
    """The run folders and three commands worth trying on them."""
    parent = str(Path(specs[0].out).parent)  # `report`, `plot` and `export` take the folder of both runs
    first = specs[0]
    lines = ["", "Run folders (records.jsonl, run.json, transcripts/):"]
    lines += [
        f"  {s.out:<22} {s.suite}: {s.tasks} tasks x {len(s.conditions)} conditions x {len(s.models)} players"
        for s in specs
    ]
    lines.append(f"  (players: {', '.join(specs[0].models)})")
    lines += [
        "",
        "Next:",
        "  # one episode's conversation: what was sent, what came back, the feedback",
        f"  repair-harness show {first.out} --model {first.models[0]} --condition allowed_json",
        "  # six figures (PNG and PDF) of both runs",
        f"  repair-harness plot {parent} --out figures/demo",
        "  # more bank tasks: 10 tasks x 2 conditions = 20 episodes",
        "  repair-harness run --suite bank-disputes --model local \\",
        "      --conditions raw,allowed_json --tasks 10 --out runs/bank-local",
    ]
    return lines
