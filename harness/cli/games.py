"""`repair-harness games`: build the TextWorld game suites and look at one game's opening.

A game that cannot be generated raises `GameGenerationError`, which the guard turns into exit code 1.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from envs import study, suite_entry
from envs.errors import UserError
from harness.cli.common import group

app = group("games", help="Build and inspect TextWorld game suites.")


def _suite_and_options(suite: str, generation: dict[str, int | None], **flags: Any) -> tuple[Any, Any]:
    """The game suite and its options from the flags (those not given, None: the suite's defaults):
    `generation` (rooms, objects, quest_length), then seeds, cache_dir, protocol."""
    from envs.options import validate  # here: help and listing import no pydantic
    from envs.textworld.suite import game_suite  # textworld: not for --help

    s = game_suite(suite)
    if s.name == "paper-textworld" and any(v is not None for v in generation.values()):
        raise UserError("paper-textworld has fixed generation parameters; use --suite textworld to change them")
    if flags.get("cache_dir") is not None:
        flags["cache_dir"] = str(flags["cache_dir"])
    given = {**generation, **flags}
    return s, validate(s.options_model, {k: v for k, v in given.items() if v is not None})


_SUITE = typer.Option(..., "--suite", help="paper-textworld or textworld")
_ROOMS = typer.Option(None, "--rooms", help="rooms per game (suite textworld)")
_OBJECTS = typer.Option(None, "--objects", help="objects per game (suite textworld)")
_QUEST = typer.Option(None, "--quest-length", help="walkthrough length (suite textworld)")
_SEEDS = typer.Option(None, "--seeds", help="e.g. 1..20 or 3,5,8")
_CACHE = typer.Option(None, "--cache-dir", help="game cache (default $REPAIR_HARNESS_CACHE/textworld)")


@app.command("build")
def build(
    suite: str = _SUITE,
    out_dir: Path | None = typer.Option(None, "--out", help="where manifest.json goes (default: in the cache)"),
    rooms: int | None = _ROOMS,
    objects: int | None = _OBJECTS,
    quest_length: int | None = _QUEST,
    seeds: str | None = _SEEDS,
    cache_dir: Path | None = _CACHE,
    jobs: int | None = typer.Option(None, "--jobs", min=1, help="games generated at once (default: CPU count)"),
) -> None:
    """Generate the suite's games that are not cached yet and write its manifest.json."""
    # rich: not for --help
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    # pydantic (the manifest): not for --help
    from envs.textworld.manifest import write_manifest

    # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.cli.common import err, out

    generation = {"rooms": rooms, "objects": objects, "quest_length": quest_length}
    s, options = _suite_and_options(suite, generation, seeds=seeds, cache_dir=cache_dir)
    n = len(options.seed_list())
    generated = 0
    started = time.perf_counter()
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    ) as progress:
        bar = progress.add_task(f"building {s.name}", total=n)

        def done(entry: Any, fresh: bool) -> None:
            nonlocal generated
            generated += fresh
            progress.update(bar, advance=1)

        manifest = s.build(options, jobs=jobs, on_done=done)
    elapsed = time.perf_counter() - started
    path = write_manifest((out_dir / "manifest.json") if out_dir else s.manifest_path(options), manifest)
    options_text = ", ".join(
        sorted(
            {
                f"{g.options['rooms']} rooms, {g.options['objects']} objects, quest length {g.options['quest_length']}"
                for g in manifest.games
            }
        )
    )
    table = Table(title=f"{s.name}: {len(manifest.games)} games ({options_text})", title_justify="left")
    table.add_column("task", no_wrap=True)
    table.add_column("walkthrough", overflow="fold", max_width=32)
    table.add_column("max", justify="right", no_wrap=True)
    table.add_column("sha256", no_wrap=True)
    table.add_column("objective", overflow="fold", ratio=1)
    for g in manifest.games:
        objective = g.objective if len(g.objective) <= 120 else g.objective[:119] + "…"
        table.add_row(g.task_id, " / ".join(g.walkthrough), str(g.max_score), g.sha256[:10], objective)
    out.print(table)
    err.print(f"{generated} generated, {n - generated} from the cache in {elapsed:.1f} s; manifest → {path}")


def game_seed(game: str) -> int:
    """The seed of `tw-20261051` (a task id, as every record holds it) or of `20261051`."""
    digits = game.strip().removeprefix("tw-")
    if not digits.isdigit():
        raise UserError(f"not a game: {game!r}; give a task id such as tw-20261051 or a seed such as 20261051")
    return int(digits)


@app.command("show")
def show(
    game: str = typer.Argument(..., help="task id or game seed, e.g. tw-20261051 or 20261051", show_default=False),
    suite: str = typer.Option("paper-textworld", "--suite", help="paper-textworld or textworld"),
    rooms: int | None = _ROOMS,
    objects: int | None = _OBJECTS,
    quest_length: int | None = _QUEST,
    protocol: str = typer.Option("plan", "--protocol", help="plan or step"),
    cache_dir: Path | None = _CACHE,
) -> None:
    """Print the opening one game gives the agent (generating the game if needed)."""
    # rich: not for --help
    from rich.panel import Panel

    # pydantic (envs.contract): not for --help
    from envs.contract import EpisodeContext, Task

    # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.cli.common import out

    generation = {"rooms": rooms, "objects": objects, "quest_length": quest_length}
    s, options = _suite_and_options(suite, generation, cache_dir=cache_dir, protocol=protocol)
    seed = game_seed(game)
    if s.name == "paper-textworld" and seed not in study.GAME_SEEDS:
        first, last = study.GAME_SEEDS.start, study.GAME_SEEDS.stop - 1
        raise UserError(
            f"{game!r} is not a game of paper-textworld; its games are tw-{first} .. tw-{last} "
            f"(or the seeds {first}..{last}); --suite textworld generates a game from any seed"
        )
    entry = s.entry(seed, options)
    # the task as the suite's own task list would hold it
    task = Task(suite=s.name, task_id=entry.task_id, params={"seed": entry.seed, **entry.options})
    env = s.make(task, options, EpisodeContext(budget=suite_entry(s.name).budget))
    try:
        opening = env.reset()
    finally:
        env.close()
    out.print(f"[bold]{entry.task_id}[/bold]  walkthrough: {' / '.join(entry.walkthrough)}  sha256 {entry.sha256[:12]}")
    for m in opening.messages:
        out.print(Panel(str(m["content"]), title=m["role"], title_align="left"), highlight=False)
    for t in opening.tools:
        out.print(
            f"tool [bold]{t.name}[/bold]: {t.description}  parameters: {', '.join(t.parameters.get('properties', {}))}"
        )
