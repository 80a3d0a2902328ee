"""`demo` (the README's main job) and `reproduce paper` (the study's grid and lanes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from conditions import PAPER_CONDITIONS
from harness.cli_common import _split, bad_input_exits, err_console, run_spec
from harness.spec import SpecError, build_spec

# The paper's protocol (../shared/PAPER.md): plan protocol, K=12 alternatives, 240-char echo and
# value cut, no fence stripping, greedy, 512 output tokens, budget 4.
PAPER_ENV = {"protocol": "plan", "k_allowed": 12, "fence_strip": False, "echo_chars": 240}
LANES: dict[str, dict[str, Any]] = {
    "primary": {"tasks": 50, "budgets": [4], "sample_seeds": [0], "decoding": {"temperature": 0.0, "max_tokens": 512}},
    "budget": {"tasks": 15, "budgets": [2, 4, 6, 8], "sample_seeds": [0], "decoding": {"temperature": 0.0, "max_tokens": 512}},
    "sampling": {"tasks": 20, "budgets": [4], "sample_seeds": [3101, 3102, 3103],
                 "decoding": {"temperature": 0.3, "top_p": 0.9, "max_tokens": 512}},
}


def paper_spec(model: str, lane: str, endpoints: list[str], out: Path, games: int | None, concurrency: int) -> Any:
    if lane not in LANES:
        raise SpecError(f"unknown lane {lane!r}; allowed: {', '.join(LANES)}")
    values = {
        "suite": "paper-textworld", "models": [model], "conditions": list(PAPER_CONDITIONS), "endpoints": endpoints,
        "feedback_cut": 240, "env_options": dict(PAPER_ENV), "out": str(out), "concurrency": concurrency, **LANES[lane],
    }
    if games is not None:
        values["tasks"] = games
    return build_spec(values, source=f"reproduce paper --lane {lane}")


def _report(dirs: list[Path]) -> None:
    from results import load, render_report

    for d in dirs:
        typer.echo(render_report(load([d]), fmt="table", width=160).rstrip("\n"))


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
    ) -> None:
        """Ray & Goyal 2026: 50 TextWorld games x 4 conditions, budget 4, greedy, 512 tokens."""
        out = out or Path("runs") / f"paper-{lane}-{model.replace('/', '_')}"
        spec = paper_spec(model, lane, _split(endpoint) or [], out, games, concurrency)
        if model == "local":
            err_console.print("[yellow]note:[/yellow] the embedded SmolLM2-135M is not a model of the study; "
                              "its numbers are not a reproduction, only a run of the same protocol.")
        run_spec(spec)
        _report([Path(spec.out)])

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
