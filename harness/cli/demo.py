"""`demo`, the README's main job: a small real ablation of the paper's conditions on the CPU model
(the grid is `harness.study_specs.demo_specs`)."""

from __future__ import annotations

from pathlib import Path

import typer

from envs import study
from harness.cli.common import EXIT_SERVER, PLUGIN_HELP, echo, group, print_report, run_spec

app = group()

# what the demo prints last: the run folders (one line each, formatted from its spec) and three commands
FOLDERS = "\nRun folders ({}, {}, {}/):"  # the records, run.json and the transcripts' folder
FOLDER = "  {s.out:<22} {s.suite}: {s.tasks} tasks x {conditions} conditions x {players} players"
NEXT = """  (players: {players})

Next:
  # one episode's conversation: what was sent, what came back, the feedback
  repair-harness show {first.out} --model {first.models[0]} --condition allowed_json
  # seven figures (PNG and PDF) of both runs
  repair-harness plot {parent} --out figures/demo
  # more bank tasks: 10 tasks x 2 conditions = 20 episodes
  repair-harness run --suite bank-disputes --model local \\
      --conditions raw,allowed_json --tasks 10 --out runs/bank-local"""


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
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP + "; their agents play too"),
) -> None:
    """The main job: a small real ablation of the paper's conditions on the embedded CPU model.

    Plays 2 bank tasks and 2 paper games under 4 conditions (16 episodes; 10 to 30 minutes on 2
    CPU cores, depending on their load), then prints one report over both. Rerun the same command
    to resume. It first checks that the embedded model can run here (`repair-harness doctor`).
    """
    from rich.markup import escape

    from harness.backends.llama_doctor import diagnose
    from harness.cli.common import err

    # `doctor`'s verdict, before any episode: a build this CPU cannot run stops here (exit 3),
    # saying why and what fixes it, instead of killing the server mid-run
    d = diagnose()
    if not d.runs:
        err.print("\n".join(d.lines), highlight=False, markup=False)
        err.print(
            f"[red]stopped:[/red] {escape(d.summary)}\nfix: {escape(d.fix or '')}\nthen rerun: repair-harness demo",
            highlight=False,
        )
        raise typer.Exit(EXIT_SERVER)
    err.print(f"doctor: {d.summary}", highlight=False)
    from harness.study_specs import demo_specs  # here: listing and help import no agent, env or pydantic
    from results.grid import write_plan

    specs = demo_specs(out, bank_tasks, games, max_tokens, [str(p) for p in plugin or []])
    # both halves named before the first plays: a report on the folder of a demo stopped halfway
    # names the half that never ran
    write_plan(out, [(Path(s.out).name, s.identity()) for s in specs])
    for spec in specs:
        run_spec(spec, retry_errors=retry_errors)
    print_report([Path(s.out) for s in specs])
    echo("\n".join(next_steps(specs)))


def next_steps(specs: list) -> list[str]:
    """The run folders and three commands worth trying on them (`report`, `plot` and `export` take
    the folder of both runs)."""
    from results import rundir

    folders = [FOLDER.format(s=s, conditions=len(s.conditions), players=len(s.models)) for s in specs]
    first, parent = specs[0], Path(specs[0].out).parent
    steps = NEXT.format(players=", ".join(first.models), first=first, parent=parent)
    return [*FOLDERS.format(rundir.RECORDS, rundir.META, rundir.TRANSCRIPTS).split("\n"), *folders, *steps.split("\n")]
