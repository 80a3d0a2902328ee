"""`fork`: continue recorded failures under other feedback, from their exact state (harness.fork)."""

from __future__ import annotations

from pathlib import Path

import typer

from harness.cli.common import PLUGIN_HELP, echo, group, parse_ints, split_list

app = group()


@app.command()
def fork(
    source: list[Path] = typer.Argument(..., help="run directories, or folders of them, whose failures to fork"),
    conditions: str | None = typer.Option(
        None, help="conditions to repair under, comma-separated (required unless --check)"
    ),
    model: str | None = typer.Option(
        None, "--model", "--models", help="the repairing model(s)  [default: each failure's own model]"
    ),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="OpenAI-compatible base URL(s)  [default: the source's, for its own models]"
    ),
    at: str = typer.Option("first", "--at", help="fork points: first | all | N (each episode's N-th rejected call)"),
    budget: int | None = typer.Option(
        None, "--budget", help="repair calls after the failure  [default: what the source had left at it]"
    ),
    seeds: str | None = typer.Option(None, help="sample seeds  [default: each failure's own]"),
    temperature: float | None = typer.Option(None, help="sampling temperature  [default: the source's]"),
    concurrency: int | None = typer.Option(None, help="concurrent episodes per endpoint"),
    shard: str | None = typer.Option(None, help="I/N: play the I-th of N parts of the fork's keys"),
    check: bool = typer.Option(
        False,
        "--check",
        help="fork every point under its source's own condition, agent and decoding, and count the "
        "continuations that reproduce the recorded ones exactly",
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the fork points and episodes; write nothing"),
    preflight: bool = typer.Option(
        True, "--preflight/--no-preflight", help="check each served model's tool calls, template and context first"
    ),
    out_dir: Path | None = typer.Option(
        None, "--out", help="the fork's run directory  [default: the first SOURCE's path + '-forks']"
    ),
    retry_errors: bool = typer.Option(False, help="rerun episodes recorded as harness errors"),
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP),
) -> None:
    """Fork recorded failures: each one's state rebuilt, its feedback rendered under each condition,
    the agent playing on; a rerun with the same --out resumes."""
    # pydantic, the spec machinery: not for --help
    from harness import shards
    from harness.fork import (
        ForkError,
        NothingToFork,
        groups,
        load_sources,
    )
    from harness.fork_checks import is_import_check
    from harness.fork_play import on_release
    from harness.fork_spec import check_at, check_budget, fork_spec_values
    from harness.rundir.targets import check_folder
    from harness.spec import build_spec

    every = load_sources([str(s) for s in source])
    if out_dir is None:  # beside its source: runs/x forks into runs/x-forks, a rerun resumes there
        out_dir = source[0].parent / f"{source[0].resolve().name}-forks"
    check_folder(out_dir, [s.path for s in every], "--out")  # a fork's records never go into a source
    if check and (model or seeds or budget is not None):  # X's rate would be reported as a reproduction rate
        raise ForkError(
            "--check replays each failure with its own model, seeds and budget: drop --model, --seeds, --budget"
        )
    if not check and not conditions:
        raise ForkError("--conditions is required (or --check: each failure under its own condition)")
    given = {
        "models": split_list(model),
        "endpoints": split_list(endpoint),
        "seeds": parse_ints(seeds),
        "budget": check_budget(budget),
        "at": check_at(at),
        "check": check,
        "plugins": [str(p) for p in plugin or []],
    }
    specs = []
    # sources of other suites (a folder of imports): one fork run each, in a folder of its own
    runs = groups(every)
    for sources in runs:
        out = out_dir if len(runs) == 1 else out_dir / str(sources[0].spec.get("suite"))
        values = fork_spec_values(sources, given)
        values["conditions"] = (
            sorted({c for s in sources for c in s.spec.get("conditions", [])}) if check else split_list(conditions)
        )
        if given["endpoints"]:
            values["endpoints"] = given["endpoints"]
        if temperature is not None:
            values["decoding"] = {**values.get("decoding", {}), "temperature": temperature}
        values.update({k: v for k, v in {"concurrency": concurrency, "out": str(out)}.items() if v is not None})
        values["plugins"] = given["plugins"]
        # --shard I/N,J/N: each part into its own folder under --out, as `run` does
        parts = [shards.parse(s) for s in split_list(shard) or []]
        specs += [
            build_spec({**values, "shard": f"{i}/{n}", "out": str(shards.directory(out, i, n))}) for i, n in parts
        ] or [build_spec(values)]
    flags = {
        "check": check,
        "import_check": is_import_check(every, check),
        "dry_run": dry_run,
        "retry_errors": retry_errors,
        "preflight": preflight,
    }
    empty = 0
    for spec in specs:
        try:
            # here, or in a worker on the bfcl-eval release an import was replayed on
            on_release(spec, flags, echo)
        except NothingToFork as exc:
            empty += 1
            if empty == len(specs):  # no source of any suite has a point: that is the error
                raise
            echo(f"skipped {spec.suite}: {exc}")  # a folder of several suites: the others fork
