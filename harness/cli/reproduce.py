"""`reproduce paper`: the published study's grid and lanes, then our report beside theirs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from envs import study
from envs.errors import UserError
from harness.cli.common import group, print_report, run_spec, split_list

app = group("reproduce", help="Run a published study's grid, then report ours beside theirs.")

# The paper's settings: K alternatives, the echo and every value cut to the same length, no fence
# stripping; the protocol is chosen per command.
PAPER_ENV = {"protocol": "plan", "k_allowed": study.K_ALLOWED, "fence_strip": False, "echo_chars": study.CUT}
# `reproduce paper` plays the artifact's own protocol by default; `plan` is our cleaner design
# (conditions differ only in information), kept for comparison. The artifact's lanes played
# fewer conditions than its primary grid: the budget lane raw and typed fields only, the
# sampling lane raw, same-info prose and typed fields.
PROTOCOLS = ("veriharness", "plan")
VERIHARNESS_LANE_CONDITIONS = {
    "primary": list(study.CONDITIONS),
    "budget": ["raw", "allowed_json"],
    "sampling": ["raw", "allowed_prose", "allowed_json"],
}
GREEDY = {"temperature": 0.0, "max_tokens": study.MAX_TOKENS}
LANES: dict[str, dict[str, Any]] = {
    "primary": {"tasks": len(study.GAME_SEEDS), "budgets": [study.BUDGET], "sample_seeds": [0], "decoding": GREEDY},
    "budget": {
        "tasks": study.BUDGET_LANE_GAMES,
        "budgets": list(study.BUDGET_LANE_BUDGETS),
        "sample_seeds": [0],
        "decoding": GREEDY,
    },
    "sampling": {
        "tasks": study.SAMPLING_LANE_GAMES,
        "budgets": [study.BUDGET],
        "sample_seeds": list(study.SAMPLING_LANE_SEEDS),
        "decoding": {
            "temperature": study.SAMPLING_TEMPERATURE,
            "top_p": study.SAMPLING_TOP_P,
            "max_tokens": study.MAX_TOKENS,
        },
    },
}


def paper_spec(
    model: str,
    lane: str,
    endpoints: list[str],
    out: Path,
    games: int | None,
    concurrency: int,
    protocol: str = "veriharness",
) -> Any:
    if lane not in LANES:
        raise UserError(f"unknown lane {lane!r}; allowed: {', '.join(LANES)}")
    if protocol not in PROTOCOLS:
        raise UserError(f"unknown protocol {protocol!r} for reproduce paper; allowed: {', '.join(PROTOCOLS)}")
    conditions = VERIHARNESS_LANE_CONDITIONS[lane] if protocol == "veriharness" else list(study.CONDITIONS)
    values = {
        "suite": "paper-textworld",
        "models": [model],
        "conditions": conditions,
        "endpoints": endpoints,
        "feedback_cut": study.CUT,
        "env_options": {**PAPER_ENV, "protocol": protocol},
        "out": str(out),
        "concurrency": concurrency,
        **LANES[lane],
    }
    if games is not None:
        values["tasks"] = games
    from harness.spec import build_spec  # here: help and listing import no spec machinery

    return build_spec(values, source=f"reproduce paper --lane {lane}")


@app.command("paper")
def reproduce_paper(
    model: str = typer.Option(..., "--model", help="vLLM preset, `local`, or a model id served by --endpoint"),
    endpoint: str | None = typer.Option(None, "--endpoint", help="OpenAI-compatible base URL(s), comma-separated"),
    lane: str = typer.Option("primary", help="primary | budget | sampling"),
    games: int | None = typer.Option(None, help="first N games instead of the lane's count (a smaller, labelled run)"),
    concurrency: int = typer.Option(4),
    out: Path | None = typer.Option(None, "--out"),
    protocol: str = typer.Option(
        "veriharness", help="veriharness (the artifact's requests and verdicts) | plan (ours)"
    ),
) -> None:
    """Ray & Goyal 2026: 50 TextWorld games x 4 conditions, budget 4, greedy, 512 tokens."""
    from harness.backends.local import LOCAL_MODEL
    from harness.cli.common import err

    tag = "paper" if protocol == "plan" else f"paper-{protocol}"
    out = out or Path("runs") / f"{tag}-{lane}-{model.replace('/', '_')}"
    spec = paper_spec(model, lane, split_list(endpoint) or [], out, games, concurrency, protocol)
    if model == LOCAL_MODEL:
        err.print(
            "[yellow]note:[/yellow] the embedded SmolLM2-135M is not a model of the study; "
            "its numbers are not a reproduction, only a run of the same protocol."
        )
    err.print(f"protocol: {protocol}")
    run_spec(spec)
    print_report([Path(spec.out)], lane=lane)
