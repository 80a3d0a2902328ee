"""`demo` (the README's main job) and `reproduce paper` (the study's grid and lanes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from conditions import PAPER_CONDITIONS
from harness.cli_common import _split, bad_input_exits, err_console, run_spec
from harness.spec import SpecError, build_spec

# The paper's settings (../shared/PAPER.md): K=12 alternatives, 240-char echo and value cut, no
# fence stripping, greedy, 512 output tokens, budget 4; the protocol is chosen per command.
PAPER_ENV = {"protocol": "plan", "k_allowed": 12, "fence_strip": False, "echo_chars": 240}
LANES: dict[str, dict[str, Any]] = {
    "primary": {"tasks": 50, "budgets": [4], "sample_seeds": [0], "decoding": {"temperature": 0.0, "max_tokens": 512}},
    "budget": {"tasks": 15, "budgets": [2, 4, 6, 8], "sample_seeds": [0], "decoding": {"temperature": 0.0, "max_tokens": 512}},
    "sampling": {"tasks": 20, "budgets": [4], "sample_seeds": [3101, 3102, 3103],
                 "decoding": {"temperature": 0.3, "top_p": 0.9, "max_tokens": 512}},
}


# `reproduce paper` plays the artifact's own protocol by default; `plan` is our cleaner design
# (conditions differ only in information), kept for comparison. The artifact's lanes played
# fewer conditions than its primary grid: the budget lane raw and typed fields only, the
# sampling lane raw, same-info prose and typed fields.
PROTOCOLS = ("veriharness", "plan")
VERIHARNESS_LANE_CONDITIONS = {"primary": list(PAPER_CONDITIONS), "budget": ["raw", "allowed_json"],
                               "sampling": ["raw", "allowed_prose", "allowed_json"]}


def paper_spec(model: str, lane: str, endpoints: list[str], out: Path, games: int | None, concurrency: int,
               protocol: str = "veriharness") -> Any:
    if lane not in LANES:
        raise SpecError(f"unknown lane {lane!r}; allowed: {', '.join(LANES)}")
    if protocol not in PROTOCOLS:
        raise SpecError(f"unknown protocol {protocol!r} for reproduce paper; allowed: {', '.join(PROTOCOLS)}")
    conditions = VERIHARNESS_LANE_CONDITIONS[lane] if protocol == "veriharness" else list(PAPER_CONDITIONS)
    values = {
        "suite": "paper-textworld", "models": [model], "conditions": conditions, "endpoints": endpoints,
        "feedback_cut": 240, "env_options": {**PAPER_ENV, "protocol": protocol}, "out": str(out),
        "concurrency": concurrency, **LANES[lane],
    }
    if games is not None:
        values["tasks"] = games
    return build_spec(values, source=f"reproduce paper --lane {lane}")


def _report(dirs: list[Path], lane: str | None = None) -> None:
    """Our report (it names the protocol played); for `reproduce paper` also the artifact's statistics."""
    from results import artifact_stats, load, render_report

    for d in dirs:
        df = load([d])
        typer.echo(render_report(df, fmt="table", width=160).rstrip("\n"))
        if lane is not None:
            typer.echo(artifact_stats.render_text(artifact_stats.analyse(df, lane)).rstrip("\n"))


def register(app: typer.Typer) -> None:
    reproduce_app = typer.Typer(no_args_is_help=True, help="Run a published study's grid, then report ours beside theirs.")
    app.add_typer(reproduce_app, name="reproduce")

    @reproduce_app.command("paper")
    @bad_input_exits
    def reproduce_paper(
        model: str = typer.Option(..., "--model", help="vLLM preset, `local`, or a model id served by --endpoint"),
        endpoint: Optional[str] = typer.Option(None, "--endpoint", help="OpenAI-compatible base URL(s), comma-separated"),
        lane: str = typer.Option("primary", help="primary | budget | sampling"),
        games: Optional[int] = typer.Option(None, help="first N games instead of the lane's count (a smaller, labelled run)"),
        concurrency: int = typer.Option(4),
        out: Optional[Path] = typer.Option(None, "--out"),
        protocol: str = typer.Option("veriharness", help="veriharness (the artifact's requests and verdicts) | plan (ours)"),
    ) -> None:
        """Ray & Goyal 2026: 50 TextWorld games x 4 conditions, budget 4, greedy, 512 tokens."""
        tag = "paper" if protocol == "plan" else f"paper-{protocol}"
        out = out or Path("runs") / f"{tag}-{lane}-{model.replace('/', '_')}"
        spec = paper_spec(model, lane, _split(endpoint) or [], out, games, concurrency, protocol)
        if model == "local":
            err_console.print("[yellow]note:[/yellow] the embedded SmolLM2-135M is not a model of the study; "
                              "its numbers are not a reproduction, only a run of the same protocol.")
        err_console.print(f"protocol: {protocol}")
        run_spec(spec)
        _report([Path(spec.out)], lane)

    @app.command("demo")
    @bad_input_exits
    def demo(
        out: Path = typer.Option(Path("runs/demo"), "--out"),
        bank_tasks: int = typer.Option(2, help="bank-disputes tasks"),
        games: int = typer.Option(2, help="paper-textworld games"),
        max_tokens: int = typer.Option(128, help="output tokens per call (the paper: 512)"),
    ) -> None:
        """The main job: a small real ablation of the paper's conditions on the embedded CPU model.

        Sized for 2 CPU cores (about 10 minutes: SmolLM2-135M evaluates ~150 prompt tokens/s and
        writes ~15 tokens/s here); raise --bank-tasks / --games for more.
        """
        common = {"models": ["local"], "conditions": list(PAPER_CONDITIONS), "budgets": [4], "concurrency": 1,
                  "decoding": {"temperature": 0.0, "max_tokens": max_tokens}}
        specs = [
            build_spec({**common, "suite": "bank-disputes", "tasks": bank_tasks, "tool_mode": "prompt",
                        "out": str(out / "bank")}, source="demo"),
            build_spec({**common, "suite": "paper-textworld", "tasks": games, "feedback_cut": 240,
                        "env_options": dict(PAPER_ENV), "out": str(out / "textworld")}, source="demo"),
        ]
        for spec in specs:
            run_spec(spec)
        _report([Path(s.out) for s in specs])
