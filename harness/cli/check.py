"""`check`: the preflight of a served model (harness.serving.preflight), on its own."""

from __future__ import annotations

from pathlib import Path

import typer

from envs.errors import UserError
from harness import defaults
from harness.cli.common import PLUGIN_HELP, echo, group, split_list, terminal_width

app = group()


@app.command()
def check(
    model: str = typer.Option(..., "--model", help="model name(s), comma-separated: local, gguf:PATH, a preset, an id"),
    endpoint: str | None = typer.Option(
        None, "--endpoint", help="OpenAI-compatible base URL(s)  [default: start the model's own server for the check]"
    ),
    tool_mode: str = typer.Option(defaults.TOOL_MODE, help="native | prompt: as the run will play"),
    api_key_env: str = typer.Option(defaults.API_KEY_ENV, help="environment variable holding the endpoints' API key"),
    gpus: str | None = typer.Option(None, help="GPUs for a server started for the check, e.g. 0"),
    gpu_memory_gib: float | None = typer.Option(None, help="memory of each GPU of --gpus"),
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP),
) -> None:
    """Check a served model before a grid: native tool calls, tool results in the template, greedy determinism,
    the context length. Exit 3 names the failed check and its likely fix."""
    # asyncio: not for --help
    import asyncio

    # pydantic, the spec and serving modules: not for --help
    from harness.serving import check_lines, check_served, failure
    from harness.spec import build_spec

    models = split_list(model) or []
    if any(m.startswith("agent:") for m in models):
        raise UserError("a reference agent has no server to check; check a model")
    values = {
        # the suite and condition only make a spec: the checks use a tool of their own
        "suite": "bank-disputes",
        "conditions": ["none"],
        "models": models,
        "endpoints": split_list(endpoint) or [],
        "tool_mode": tool_mode,
        "api_key_env": api_key_env,
        "gpus": split_list(gpus),
        "gpu_memory_gib": gpu_memory_gib,
        "plugins": [str(p) for p in plugin or []],
    }
    spec = build_spec({k: v for k, v in values.items() if v is not None})
    results = asyncio.run(check_served(spec))
    width = min(80, terminal_width())
    for r in results:
        echo(f"{r.model} at {r.endpoint} ({spec.tool_mode} mode), {r.seconds:.1f} s")
        for c in r.checks:
            echo("\n".join(check_lines(c.name, c.status, c.detail, c.fix, width)))
    if any(r.failed for r in results):
        raise failure(results)  # the guard: one line per failed check, exit 3
    echo("passed" + (" (warnings above)" if any(c.status == "warn" for r in results for c in r.checks) else ""))
