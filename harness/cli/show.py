"""`show`: one episode's conversation from its transcript, readable in a terminal.

Which episode, and what of each call is new, is `harness.readers.transcripts`'s; this prints its blocks
with rich, every piece as plain text (no markup) with control characters made visible.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from harness.cli.common import group

if TYPE_CHECKING:
    from harness.readers.transcripts import Block

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
# the kind of a piece -> its style; the kind of a panel -> its border
STYLES = {"": "", "strong": "bold", "aside": "dim", "good": "green", "bad": "red"}
BORDERS = {"sent": "none", "review": "magenta", "told": "yellow", "answer": "cyan"}
# every panel's title on the left, its subtitle (an answer's facts) on the right
PANEL: dict[str, Any] = {"title_align": "left", "subtitle_align": "right"}


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
    # pydantic (the records' models): not for --help
    from harness.readers import transcripts
    from results.columns import C  # help and listing import no `results` (test_startup_imports)

    asked = {C.task_id: task, C.condition: condition, C.model: model, C.budget: budget, C.sample_seed: seed}
    record, matches = transcripts.pick(transcripts.episode_records(run_dir), asked, FLAGS, run_dir)
    print_blocks(transcripts.header(record, matches, " / ".join(FLAGS.values())))
    transcript = transcripts.read_transcript(run_dir, record)
    print_blocks(transcripts.conversation(transcript, record[C.condition], str(record[C.model])))


def print_blocks(blocks: list[Block]) -> None:
    from rich.panel import Panel  # rich: not for --help
    from rich.text import Text  # rich: not for --help

    from harness.cli.common import out  # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.readers.transcripts import visible  # pydantic (the records' models): not for --help

    for b in blocks:
        text = Text.assemble(*((visible(piece), STYLES[kind]) for piece, kind in b.pieces))
        if b.kind == "line":
            out.print(text)
        else:
            out.print(Panel(text, title=b.title, subtitle=b.subtitle or None, border_style=BORDERS[b.kind], **PANEL))
