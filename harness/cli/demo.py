"""`demo`, the README's main job: a small real ablation of the paper's conditions on the CPU model
(the grid is `harness.study_specs.demo_specs`)."""

from __future__ import annotations

from pathlib import Path

import typer

from envs import study
from harness.cli.common import EXIT_SERVER, PLUGIN_HELP, echo, group, run_spec, terminal_width

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
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP + "; their agents play too"),
) -> None:
    """The main job: a small real ablation of the paper's conditions on the embedded CPU model.

    Plays 2 bank tasks and 2 paper games under 4 conditions (16 episodes; 10 to 30 minutes on 2
    CPU cores, depending on their load), beside the reference agents, then prints one page: solved/N
    per condition and player, what it shows, the run folders and the commands for the full report,
    the figures and the next run. Rerun the same command to resume. It first checks that the
    embedded model can run here (`repair-harness doctor`).
    """
    # rich: not for --help
    from rich.markup import escape

    # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.cli.common import err

    # the serving front door imports its module on use: not for --help
    from harness.serving import diagnose

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

    # pandas (results): not for --help
    from results.grid import write_plan

    specs = demo_specs(out, bank_tasks, games, max_tokens, [str(p) for p in plugin or []])
    # both halves named before the first plays: a report on the folder of a demo stopped halfway
    # names the half that never ran
    write_plan(out, [(Path(s.out).name, s.identity()) for s in specs])
    # the whole job said before its first part: each run's estimate counts its own episodes only
    models = [m for m in specs[0].models if not m.startswith("agent:")]
    episodes = (bank_tasks + games) * len(specs[0].conditions) * len(models)
    err.print(
        f"demo: {len(specs)} runs ({', '.join(s.suite for s in specs)}), {episodes} episodes of "
        f"{', '.join(models)} beside the reference agents; each run says its own estimate after its first 3",
        highlight=False,
    )
    for spec in specs:
        run_spec(spec, retry_errors=retry_errors)
    # pandas (results): not for --help
    from harness.readers.demo_page import PAGE_WIDTH, page
    from results import load

    echo("\n".join(page(load([Path(s.out) for s in specs]), specs, min(PAGE_WIDTH, terminal_width()))))
