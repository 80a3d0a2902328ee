"""`reproduce paper`: the published study's grid and lanes (`harness.study_specs`), then our report beside theirs."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.common import EXIT_HARNESS_ERRORS, group, print_report, run_spec, split_list

app = group("reproduce", help="Run a published study's grid, then report ours beside theirs.")


@app.command("paper")
def reproduce_paper(
    model: str = typer.Option(..., "--model", help="vLLM preset, `local`, or a model id served by --endpoint"),
    endpoint: str | None = typer.Option(None, "--endpoint", help="OpenAI-compatible base URL(s), comma-separated"),
    lane: str = typer.Option("primary", help="primary | budget | sampling"),
    games: int | None = typer.Option(None, help="first N games instead of the lane's count (a smaller, labelled run)"),
    concurrency: int | None = typer.Option(
        None, help="episodes at once  [default: 4; 1 on the embedded model's server, which answers one at a time]"
    ),
    retry_errors: bool = typer.Option(False, help="rerun episodes recorded as harness errors"),
    out: Path | None = typer.Option(None, "--out"),
    protocol: str = typer.Option(
        "veriharness", help="veriharness (the artifact's requests and verdicts) | plan (ours)"
    ),
) -> None:
    """Ray & Goyal 2026: 50 TextWorld games x 4 conditions, budget 4, greedy, 512 tokens."""
    # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.cli.common import err

    # the serving front door imports its module on use: not for --help
    from harness.serving import LOCAL_MODEL
    from harness.study_specs import paper_spec  # here: help and listing import no spec machinery

    tag = "paper" if protocol == "plan" else f"paper-{protocol}"
    out = out or Path("runs") / f"{tag}-{lane}-{model.replace('/', '_')}"
    spec = paper_spec(model, lane, split_list(endpoint) or [], out, games, concurrency, protocol)
    if model == LOCAL_MODEL:
        err.print(
            "[yellow]note:[/yellow] the embedded SmolLM2-135M is not a model of the study; "
            "its numbers are not a reproduction, only a run of the same protocol."
        )
    err.print(f"protocol: {protocol}")
    try:
        run_spec(spec, retry_errors)
    except typer.Exit as stop:
        if stop.exit_code != EXIT_HARNESS_ERRORS:
            raise
        # the report beside the study's all the same: the errors are left out of its N, and said
        print_report([Path(spec.out)], lane=lane)
        raise
    print_report([Path(spec.out)], lane=lane)
