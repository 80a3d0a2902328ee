"""`show`: one episode's conversation from its transcript, readable in a terminal.

A transcript holds, per model call, every message sent (the whole prompt), the answer and what the
environment made of it. Printed in full, each call would repeat the prompt; here the opening is
printed once and each later call shows only what is new: what the condition told the agent.
Model output is untrusted: it is printed as plain text, with control characters made visible.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from envs.errors import UserError
from harness.cli.common import group

if TYPE_CHECKING:
    from rich.text import Text

# rich is imported inside the functions that print: `--help` imports none of it

app = group()

# record field -> the option of `show` that picks it
FLAGS = {
    "task_id": "--task",
    "condition": "--condition",
    "model": "--model",
    "budget": "--budget",
    "sample_seed": "--seed",
}

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def plain(value: Any) -> Text:
    """Text as-is (no markup), with terminal control characters shown as \\xNN, never sent to the terminal."""
    from rich.text import Text

    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return Text(_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text))


@app.command("show")
def show(
    run_dir: Path = typer.Argument(..., help="a run directory", show_default=False),
    task: str | None = typer.Option(
        None, "--task", help="task id, e.g. bank-0000 or tw-20261051  [default: the first]", show_default=False
    ),
    condition: str | None = typer.Option(
        None, "--condition", help="condition  [default: the first recorded]", show_default=False
    ),
    model: str | None = typer.Option(
        None, "--model", help="model; required when the run has several", show_default=False
    ),
    budget: int | None = typer.Option(
        None, "--budget", help="budget  [default: the first recorded]", show_default=False
    ),
    seed: int | None = typer.Option(
        None, "--seed", help="sample seed  [default: the first recorded]", show_default=False
    ),
) -> None:
    """Print one episode's conversation: what was sent, what came back, what the condition told the agent."""
    from rich.text import Text

    from harness.cli.common import out
    from results.columns import C

    records = _records(run_dir)
    asked = {C.task_id: task, C.condition: condition, C.model: model, C.budget: budget, C.sample_seed: seed}
    picked = [r for r in records if all(v is None or r[k] == v for k, v in asked.items())]
    if not picked:
        for key, value in asked.items():
            known = list(dict.fromkeys(r[key] for r in records))
            if value is not None and value not in known:
                raise UserError(
                    f"no episode with {FLAGS[key]} {value!r} in {run_dir}; recorded: "
                    f"{', '.join(map(str, known[:20]))}" + (", ..." if len(known) > 20 else "")
                )
        raise UserError(
            f"no episode in {run_dir} matches " + " ".join(f"{FLAGS[k]} {v}" for k, v in asked.items() if v is not None)
        )
    models = list(dict.fromkeys(r[C.model] for r in picked))
    if model is None and len(models) > 1:
        # the reference agents share a run's folder with the model: which one is meant must be said
        raise UserError(
            f"{run_dir} holds the episodes of {len(models)} models: {', '.join(models)}; "
            f"pick one with --model (e.g. --model {models[0]})"
        )
    record = picked[0]
    _header(record, len(picked))
    if not record.get(C.transcript):
        raise UserError(f"the episode has no transcript ({record.get(C.harness_error) or 'not written'})")
    path = run_dir / record[C.transcript]
    try:
        transcript = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the transcript {path}: {exc}") from None
    print_turns(transcript.get("turns", []), record[C.condition])
    if transcript.get("harness_error"):
        out.print(Text(f"harness error: {transcript['harness_error']}", style="red"))


def _records(run_dir: Path) -> list[dict[str, Any]]:
    """The run directory's records, read by the one reader of run directories (results.load)."""
    from results.load import iter_records

    if not (run_dir / "records.jsonl").exists():
        raise UserError(f"{run_dir}: no records.jsonl (not a run directory, or nothing ran yet)")
    rows = list(iter_records(run_dir))
    if not rows:
        raise UserError(f"{run_dir / 'records.jsonl'}: no records")
    return rows


def _header(r: dict[str, Any], matches: int) -> None:
    from rich.text import Text

    from harness.cli.common import out
    from results.columns import C

    result = "harness error" if r[C.success] is None else ("solved" if r[C.success] else "not solved")
    out.print(
        Text.assemble(
            (f"{r[C.task_id]}", "bold"),
            f"  {r[C.suite]}, model {r[C.model]}, condition ",
            (r[C.condition], "bold"),
            f", budget {r[C.budget]}, seed {r[C.sample_seed]}",
        )
    )
    out.print(
        plain(
            f"{result} ({r[C.end_reason]}) after {r[C.model_calls]} model calls"
            + (f"; final failure {r[C.final_failure]}" if r.get(C.final_failure) else "")
        )
    )
    # in the run's config; records written before it was kept there had it in condition_params
    mode = (r.get(C.config) or {}).get("tool_mode", (r.get(C.condition_params) or {}).get("tool_mode"))
    out.print(Text(f"(tool mode {mode}: the tool schemas sent with every call are not repeated here)", style="dim"))
    if matches > 1:
        out.print(
            Text(
                f"({matches} episodes match; this is the first: narrow with {' / '.join(FLAGS.values())})", style="dim"
            )
        )


def _new_part(
    sent: list[dict[str, Any]], before: list[dict[str, Any]], opening: list[dict[str, Any]], answer: str
) -> list[tuple[str, str]]:
    """The messages of `sent` that the previous call did not hold, as (role, text). A message that
    grew from the previous call's or the opening's (history `last` folds the previous answer and
    its feedback into the opening) counts with its added text only."""
    new: list[tuple[str, str]] = []
    for i, m in enumerate(sent):
        content = str(m.get("content") or "")
        same = [
            str(ms[i].get("content") or "") if i < len(ms) and ms[i].get("role") == m.get("role") else None
            for ms in (before, opening)
        ]
        if content == same[1] or (content == same[0] and i < len(sent) - 1):
            continue  # the opening, or an earlier turn of a growing history
        # the last message is what this call was told, even when it repeats the previous call's
        olds = [o for o in same if o is not None and o != content]
        if m.get("role") == "assistant" and content.strip() == answer.strip():
            continue  # the previous answer, already shown
        prefix = max((o for o in olds if o and content.startswith(o)), key=len, default="")
        content = content[len(prefix) :].lstrip("\n")
        if m.get("tool_calls") and not content:
            continue
        new.append((m.get("role", "?"), content))
    return new


def print_turns(turns: list[dict[str, Any]], condition: str) -> None:
    from rich.panel import Panel

    from harness.cli.common import out
    from harness.loop import full_messages

    before: list[dict[str, Any]] = []
    opening: list[dict[str, Any]] = []
    previous_answer = ""
    action = 0
    for turn, full in zip(turns, full_messages(turns), strict=True):
        # a review turn is shown by what it added; an action turn by its whole conversation
        sent = turn.get("messages", []) if turn.get("kind") == "review" else full
        if turn.get("kind") == "review":
            for _role, text in _new_part(sent, [], [], previous_answer):
                out.print(
                    Panel(plain(text), title=f"review prompt ({condition})", title_align="left", border_style="magenta")
                )
        elif not before:
            opening = sent
            for m in sent:
                out.print(Panel(plain(str(m.get("content") or "")), title=f"sent: {m.get('role')}", title_align="left"))
        else:
            for role, text in _new_part(sent, before, opening, previous_answer):
                out.print(
                    Panel(
                        plain(text),
                        title=f"told the agent ({condition}, as {role})",
                        title_align="left",
                        border_style="yellow",
                    )
                )
        if turn.get("kind") != "review":
            action += 1
            before = sent
        answer = turn.get("answer") or {}
        _answer(answer, action, turn.get("kind", "action"))
        previous_answer = answer.get("text") or ""
        if "outcome" in turn:
            _outcome(turn["outcome"])


def _answer(a: dict[str, Any], n: int, kind: str) -> None:
    from rich.panel import Panel
    from rich.text import Text

    from harness.cli.common import out

    body = Text()
    if a.get("text"):
        body.append_text(plain(a["text"]))
    for c in a.get("tool_calls") or []:
        if body:
            body.append("\n")
        body.append("call ", style="bold")
        body.append_text(plain(f"{c.get('name')}({json.dumps(c.get('arguments'), ensure_ascii=False)})"))
    if not body:
        body = Text("(empty answer)", style="dim")
    usage = a.get("usage") or {}
    facts = (
        [
            f"{usage.get('prompt_tokens', '?')}+{usage.get('completion_tokens', '?')} tokens",
            f"finish {a.get('finish_reason')}",
        ]
        + (["truncated"] if a.get("truncated") else [])
        + ([f"parse error: {a['parse_error']}"] if a.get("parse_error") else [])
    )
    title = f"call {n}: the model answered" + (" (review)" if kind == "review" else "")
    out.print(
        Panel(
            body,
            title=title,
            subtitle=", ".join(facts),
            title_align="left",
            subtitle_align="right",
            border_style="cyan",
        )
    )


def _outcome(o: dict[str, Any]) -> None:
    from rich.text import Text

    from harness.cli.common import out

    if "observation" in o:  # accepted
        end = " — game won" if o.get("won") else " — lost" if o.get("lost") else " — done" if o.get("done") else ""
        line = Text.assemble(("accepted", "green"), end + ": ")
        line.append_text(plain(o.get("observation", "")))
    else:
        line = Text.assemble(("rejected ", "red"), (o.get("code", "?"), "bold"), ": ")
        line.append_text(plain(o.get("message", "")))
        if o.get("location"):
            line.append_text(
                plain(f" (at {o['location']}, observed {json.dumps(o.get('observed'), ensure_ascii=False)})")
            )
    out.print(line)
