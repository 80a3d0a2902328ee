"""`run`: a grid of episodes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import typer

from envs import study
from envs.errors import UserError
from harness import defaults
from harness.cli.common import PLUGIN_HELP, echo, group, parse_ints, run_spec, split_list, terminal_width

app = group()


def _default(value: Any) -> str:
    """A run setting's default as `--help` shows it, from `harness.defaults`, where RunSpec and
    Decoding take theirs: the two never disagree, and the help imports no pydantic."""
    if isinstance(value, (list, tuple)):
        value = ",".join(map(str, value))
    return f"  [default: {value}]"


_OUT_HELP = "run directory" + _default(defaults.OUT)


@app.command()
def run(
    config: Path | None = typer.Option(
        None, "--config", help="TOML grid file (keys = RunSpec fields); flags given too override it"
    ),
    suite: str | None = typer.Option(None, help="suite name, required (see `repair-harness suites`)"),
    model: str | None = typer.Option(
        None,
        "--model",
        "--models",
        help="model name(s), comma-separated, required: local, a vLLM preset, a model served by --endpoint, "
        "gguf:PATH (a GGUF file on the embedded llama.cpp server) or agent:NAME (a reference agent: gold, reader, "
        "random, stubborn, or a plugin's; docs/conditions.md)",
    ),
    endpoint: str | None = typer.Option(
        None,
        "--endpoint",
        help="OpenAI-compatible base URL(s), comma-separated  [default: none: start the model's own server]",
    ),
    conditions: str | None = typer.Option(
        None, help="condition names, comma-separated, required (see `repair-harness conditions`)"
    ),
    budget: str | None = typer.Option(
        None,
        "--budget",
        help="budget(s) per episode, e.g. 4 or 2,4,6,8: model calls, review calls included (tool calls in "
        "TextWorld's step protocol)  [default: the suite's, see `repair-harness suites`]",
    ),
    tasks: int | None = typer.Option(None, help="first N tasks of the suite  [default: all of them]"),
    task_ids: str | None = typer.Option(None, help="task ids, comma-separated"),
    seeds: str | None = typer.Option(None, help="sample seeds, e.g. 0 or 3101..3103" + _default(defaults.SAMPLE_SEEDS)),
    temperature: float | None = typer.Option(None, help="sampling temperature" + _default(study.TEMPERATURE)),
    top_p: float | None = typer.Option(None, help="nucleus sampling" + _default(study.TOP_P)),
    max_tokens: int | None = typer.Option(None, help="output tokens per call" + _default(study.MAX_TOKENS)),
    tool_mode: str | None = typer.Option(None, help="native | prompt" + _default(defaults.TOOL_MODE)),
    text_calls: str | None = typer.Option(
        None, help="native mode, a call returned as text: parse | violation" + _default(defaults.TEXT_CALLS)
    ),
    constrain: str | None = typer.Option(
        None,
        help="decoding arms, comma-separated: none | json (any JSON object) | schema (the tools' JSON Schema), "
        "constrained by the server  [default: none]",
    ),
    feedback_cut: int | None = typer.Option(
        None, help="cut every rendered feedback value to N chars (paper: 240)  [default: no cut]"
    ),
    env: list[str] | None = typer.Option(
        None, "--env", help="suite option KEY=VALUE, repeatable (`repair-harness suites NAME` lists them)"
    ),
    concurrency: int | None = typer.Option(
        None,
        help=f"concurrent episodes per endpoint  [default: {defaults.CONCURRENCY}; for a vLLM server the harness "
        "starts: as many as keep its batch full, this many at most]",
    ),
    gpus: str | None = typer.Option(
        None,
        help="GPUs for the servers the harness starts, e.g. 0,1  [default: NVML's, CUDA_VISIBLE_DEVICES respected]",
    ),
    gpu_memory_gib: float | None = typer.Option(None, help="memory of each GPU of --gpus (a plan made elsewhere)"),
    share_gpus: bool | None = typer.Option(
        None,
        "--share-gpus/--no-share-gpus",
        help="let vLLM servers share a GPU, splitting --gpu-memory-utilization (at most 0.95); default: one per GPU",
    ),
    max_servers: int | None = typer.Option(
        None, help="model servers the harness starts alive at once, llama.cpp's too  [default: as many as fit]"
    ),
    shard: str | None = typer.Option(
        None, help="I/N: play the I-th of N parts of the grid into --out/shard-I-of-N; I/N,J/N plays several in turn"
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="print the servers' plan (phases, GPUs, commands); write nothing"
    ),
    fmt: str = typer.Option("text", "--format", help="--dry-run output: text | json"),
    preflight: bool = typer.Option(
        True, "--preflight/--no-preflight", help="check each served model's tool calls, template and context first"
    ),
    suite_check: bool = typer.Option(
        True,
        "--suite-check/--no-suite-check",
        help="first, agent:gold plays each task: one it cannot win stops the run",
    ),
    api_key_env: str | None = typer.Option(
        None,
        help="environment variable holding the endpoints' API key; its value is never recorded"
        + _default(defaults.API_KEY_ENV),
    ),
    backend: str | None = typer.Option(
        None, help="openai (any endpoint) | vllm (in-process: GPU, or the CPU build)" + _default(defaults.BACKEND)
    ),
    max_response_mib: float | None = typer.Option(
        None,
        help="an answer larger than this many MiB is a harness error, read no further"
        + _default(defaults.MAX_RESPONSE_MIB),
    ),
    # text, not a Path: Path("") is ".", so `--out ''` (an unset variable) wrote the run into the current folder
    out_dir: str | None = typer.Option(None, "--out", help=_OUT_HELP),
    retry_errors: bool = typer.Option(False, help="rerun episodes recorded as harness errors"),
    plugin_changed: bool = typer.Option(
        False,
        "--plugin-changed",
        help="with --retry-errors: take a plugin mended since the run recorded it (run.json's plugin history says so)",
    ),
    plugin: list[Path] | None = typer.Option(None, "--plugin", help=PLUGIN_HELP),
) -> None:
    """Run a grid of episodes; a rerun with the same --out resumes it."""
    from harness.spec import build_spec, load_toml  # here: help imports no spec machinery or pydantic

    if plugin_changed and not retry_errors:
        raise UserError(
            "--plugin-changed goes with --retry-errors: the harness errors are played again under the mended plugin"
        )

    values: dict[str, Any] = load_toml(config) if config else {}
    flags = {
        "suite": suite,
        "models": split_list(model),
        "endpoints": split_list(endpoint),
        "conditions": split_list(conditions),
        "budgets": parse_ints(budget),
        "tasks": tasks,
        "task_ids": split_list(task_ids),
        "sample_seeds": parse_ints(seeds),
        "tool_mode": tool_mode,
        "text_calls": text_calls,
        "feedback_cut": feedback_cut,
        "constrain": split_list(constrain),
        "concurrency": concurrency,
        "gpus": split_list(gpus),
        "gpu_memory_gib": gpu_memory_gib,
        "share_gpus": share_gpus,
        "max_servers": max_servers,
        "api_key_env": api_key_env,
        "backend": backend,
        "max_response_mib": max_response_mib,
        "out": None if out_dir is None else str(Path(out_dir)) if out_dir.strip() else out_dir,
    }
    values.update({k: v for k, v in flags.items() if v is not None})
    values["plugins"] = [*values.get("plugins", []), *map(str, plugin or [])]
    decoding = {"temperature": temperature, "top_p": top_p, "max_tokens": max_tokens}
    values["decoding"] = {**values.get("decoding", {}), **{k: v for k, v in decoding.items() if v is not None}}
    for item in env or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UserError(f"--env expects KEY=VALUE, got {item!r}")
        values.setdefault("env_options", {})[key] = _literal(raw)
    # pydantic (results.rundir): not for --help
    from harness import shards

    source = str(config) if config else "flags"
    if fmt not in ("text", "json"):
        raise UserError(f"--format takes text or json, got {fmt!r}")
    parts = [shards.parse(s) for s in split_list(shard) or []]
    out = values.get("out", defaults.OUT)
    specs = [
        build_spec({**values, "shard": f"{i}/{n}", "out": str(shards.directory(out, i, n))}, source) for i, n in parts
    ] or [build_spec(values, source)]
    if dry_run:
        # the runner, pydantic: only for --dry-run
        from harness.runner import dry_count, dry_plan, dry_said
        from harness.serving import render, to_json

        shown = [(spec, dry_plan(spec), dry_count(spec)) for spec in specs]
        if fmt == "json":
            data = [{**to_json(placed, spec), "episodes": count} for spec, placed, count in shown]
            echo(json.dumps(data[0] if len(data) == 1 else {"shards": data}, indent=2))
        else:
            said = [
                textwrap.fill(
                    f"{spec.out}: {dry_said(count)}", terminal_width(), break_long_words=False, break_on_hyphens=False
                )
                for spec, _, count in shown
            ]
            echo(
                "\n".join(
                    f"{line}\n{render(placed, spec)}" for line, (spec, placed, _) in zip(said, shown, strict=True)
                )
            )
        return
    for spec in specs:
        run_spec(spec, retry_errors, preflight, suite_check, plugin_changed)


def _literal(raw: str) -> Any:
    """--env values: JSON scalars where they parse (12, true, null), strings otherwise."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read: the text itself
        return raw
