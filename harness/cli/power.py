"""`power`: from a pilot, what a study needs to see an effect, and the noise floor of repeats.

A command of its own rather than `report --power`: it answers a question asked before a study, with
inputs the report has no use for (the effect to detect, the power wanted, studies to simulate), and
its page is sizes, not results. The report keeps the other half, the effect a null result could
have detected (its MDE, beside every contrast that found no difference).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from envs.errors import UserError
from harness.cli.analysis import Dirs
from harness.cli.common import PLUGIN_HELP, echo, group, terminal_width

app = group()

MAX_STUDIES = 100_000


@app.command("power")
def power_command(
    dirs: Dirs,
    effect: Annotated[float, typer.Option(help="the difference to detect, in points (5 = 5 percentage points)")],
    alpha: Annotated[float, typer.Option(help="the family's significance level, before Holm")] = 0.05,
    power: Annotated[float, typer.Option(help="the chance of detecting --effect that the size must give")] = 0.8,
    contrasts: Annotated[
        str | None, typer.Option(help='e.g. "allowed_json-raw"; default: the paper\'s planned contrasts present')
    ] = None,
    factors: Annotated[bool, typer.Option(help="also each feedback part's (and the form's) effect")] = False,
    simulate: Annotated[
        int,
        typer.Option(
            min=0,
            help="draw this many studies at each size found and run the report's test on them "
            f"(at most {MAX_STUDIES:,})",
        ),
    ] = 0,
    fmt: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    width: Annotated[
        int | None, typer.Option(min=40, help="table width in columns  [default: the terminal's]", show_default=False)
    ] = None,
    plugin: Annotated[list[Path] | None, typer.Option("--plugin", help=PLUGIN_HELP)] = None,
) -> None:
    """The MDE at the pilot's size and the size needed for --effect, per contrast and factor in the report's
    own unit, Holm-adjusted; and the noise floor of repeated seeds or runs (docs/power.md)."""
    # pandas, scipy (results): not at start-up
    from harness.plugins import load as load_plugins
    from harness.progress import SimulationProgress
    from results import load, paper
    from results.contrasts import parse_contrasts
    from results.noise import noise_floor
    from results.planning import Goal, plan
    from results.power_text import FORMATS, render
    from results.rundir import run_dirs

    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}; allowed: {', '.join(FORMATS)}")
    if not 0 < effect < 100:
        raise UserError(f"--effect is a difference in points, above 0 and below 100, got {effect:g}")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise UserError(f"--alpha and --power are shares between 0 and 1, got {alpha:g} and {power:g}")
    if simulate > MAX_STUDIES:  # each study is the report's test, 10,000 bootstrap draws: ~10 ms or more
        raise UserError(
            f"--simulate {simulate:,}: at most {MAX_STUDIES:,} studies a size (each runs the report's test, "
            f"10,000 bootstrap draws; 1,000 give the power to a standard error of 1.3 points)"
        )
    load_plugins(plugin or [])
    runs = run_dirs(dirs)
    df = load(runs, repeats=True)
    repeats = df.attrs["repeats"]
    present = set(df["condition"].unique())
    if contrasts is None:
        pairs = [p for p in paper.PLANNED_CONTRASTS if set(p) <= present]
    else:
        pairs = parse_contrasts(contrasts, present)
    goal = Goal(effect=effect / 100, alpha=alpha, power=power, studies=simulate, progress=SimulationProgress())
    table = plan(df, pairs, goal, factors=factors)
    if table.empty:
        raise UserError(
            "nothing to plan: no contrast with pairs in the pilot "
            f"(conditions present: {', '.join(sorted(present))}; name them with --contrasts A-B)"
        )
    noise = noise_floor(df, alpha)
    head = [
        f"pilot: {', '.join(str(r) for r in runs)}; {len(df):,} episodes"
        + (
            f"; {repeats} runs of one grid, read as repeats (each run's seeds as seeds of their own)"
            if repeats > 1
            else ""
        ),
        f"goal: detect {effect:g} points with {power:.0%} power at alpha {alpha:g}, Holm over each family",
        "each row is a test `report` runs: a contrast per model and suite (its family: that suite's contrasts)"
        + (", a factor per model pooled over its suites, as report --factors pools it" if factors else ""),
    ]
    echo(render(table, None if noise.empty else noise, goal, head, width or terminal_width(), fmt).rstrip("\n"))
