"""`run` (a grid of episodes) and the two listings, `conditions` and `suites`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.table import Column, Table

from common.errors import UserError
from conditions import CONDITIONS
from envs import describe_suites
from harness.cli.common import group, out, parse_ints, run_spec, split_list
from harness.spec import build_spec, load_toml

app = group()


@app.command()
def run(
    config: Optional[Path] = typer.Option(None, "--config", help="TOML grid file; flags given too override it"),
    suite: Optional[str] = typer.Option(None, help="suite name (see `repair-harness suites`)"),
    model: Optional[str] = typer.Option(None, "--model", "--models", help="model name(s), comma-separated"),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", help="OpenAI-compatible base URL(s), comma-separated"),
    conditions: Optional[str] = typer.Option(None, help="condition names, comma-separated"),
    budget: Optional[str] = typer.Option(None, "--budget", help="model-call budget(s) per episode, e.g. 4 or 2,4,6,8"),
    tasks: Optional[int] = typer.Option(None, help="first N tasks of the suite"),
    task_ids: Optional[str] = typer.Option(None, help="task ids, comma-separated"),
    seeds: Optional[str] = typer.Option(None, help="sample seeds, e.g. 0 or 3101..3103"),
    temperature: Optional[float] = typer.Option(None),
    top_p: Optional[float] = typer.Option(None),
    max_tokens: Optional[int] = typer.Option(None),
    tool_mode: Optional[str] = typer.Option(None, help="native | prompt"),
    text_calls: Optional[str] = typer.Option(None, help="native mode, a call returned as text: parse | violation"),
    feedback_cut: Optional[int] = typer.Option(None, help="cut every rendered feedback value to N chars (paper: 240)"),
    env: Optional[list[str]] = typer.Option(None, "--env", help="suite option KEY=VALUE (repeatable)"),
    concurrency: Optional[int] = typer.Option(None, help="concurrent episodes per endpoint"),
    api_key_env: Optional[str] = typer.Option(
        None, help="environment variable holding the endpoints' API key (default OPENAI_API_KEY); its value is never recorded"),
    backend: Optional[str] = typer.Option(None, help="openai (any endpoint) | vllm (in-process: GPU, or the CPU build)"),
    out_dir: Optional[Path] = typer.Option(None, "--out", help="run directory"),
    retry_errors: bool = typer.Option(False, help="rerun episodes recorded as harness errors"),
) -> None:
    """Run a grid of episodes; a rerun with the same --out resumes it."""
    values: dict[str, Any] = load_toml(config) if config else {}
    flags = {
        "suite": suite, "models": split_list(model), "endpoints": split_list(endpoint),
        "conditions": split_list(conditions), "budgets": parse_ints(budget), "tasks": tasks,
        "task_ids": split_list(task_ids), "sample_seeds": parse_ints(seeds), "tool_mode": tool_mode,
        "text_calls": text_calls, "feedback_cut": feedback_cut, "concurrency": concurrency, "api_key_env": api_key_env, "backend": backend,
        "out": str(out_dir) if out_dir else None,
    }
    values.update({k: v for k, v in flags.items() if v is not None})
    decoding = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}
    values["decoding"] = {**values.get("decoding", {}), **{k: v for k, v in decoding.items() if v is not None}}
    for item in env or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UserError(f"--env expects KEY=VALUE, got {item!r}")
        values.setdefault("env_options", {})[key] = _literal(raw)
    spec = build_spec(values, source=str(config) if config else "flags")
    run_spec(spec, retry_errors)


def _literal(raw: str) -> Any:
    """--env values: JSON scalars where they parse (12, true, null), strings otherwise."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


@app.command("conditions")
def list_conditions() -> None:
    """List the conditions."""
    table = Table(Column("name", no_wrap=True), Column("feedback", no_wrap=True), "arbiter", "paper", "what the agent is told")
    for c in CONDITIONS.values():
        table.add_row(c.name, c.feedback, c.arbiter, c.paper_name or "", c.description)
    out.print(table)


@app.command("suites")
def list_suites() -> None:
    """List the suites."""
    table = Table(Column("name", no_wrap=True), "budget", "description")
    for s in describe_suites():
        table.add_row(s["name"], str(s["default_budget"]), s["description"])
    out.print(table)
