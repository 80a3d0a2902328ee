"""The page `repair-harness demo` ends with: what a newcomer reads after the runs, from the runs'
records and specs (issue 40: at most 60 lines of at most 80 columns)."""

from __future__ import annotations

import shlex
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.agents import is_agent
from harness.serving import LOCAL_MODEL
from results import rundir
from results.columns import C
from results.solved import label, render, solved_grid

if TYPE_CHECKING:
    from harness.run_spec import RunSpec
    from results.solved import Solved

# the page the demo ends with, at most 60 lines of at most PAGE_WIDTH columns: the solved
# table, what it shows and does not, the run folders, and the commands for the full report,
# one conversation, the figures and the next run
PAGE_WIDTH = 80
TITLE = "Solved/N: each player on the same episodes (harness errors not counted in N)"
FOLDERS = "Run folders ({}, {}, {}/):"  # the records, run.json and the transcripts' folder
FOLDER = "{s.suite}: {s.tasks} {unit} x {conditions} conditions x {players} players"
# what each built-in reference agent's column says (docs/conditions.md, `ceiling`)
ROLES = {
    "agent:gold": "gold plays each task's solution (every task can be won)",
    "agent:reader": "reader repairs one seeded mistake from what the condition shows (its ceiling)",
    "agent:random": "random sends random calls of the right shape (the floor)",
    "agent:stubborn": "stubborn resends its first rejected call (identical retries)",
}
NEXT = (
    ("the full report: CIs, paired contrasts, failures, repair dynamics", "repair-harness report {parent}"),
    (
        "one episode's conversation: what was sent, what came back, the feedback",
        "repair-harness show {first.out} --model {first.models[0]} --condition allowed_json",
    ),
    ("seven figures (PNG and PDF) of both runs", "repair-harness plot {parent} --out figures/demo"),
    (
        "the next run: 10 bank tasks x 2 conditions = 20 episodes of the model",
        "repair-harness run --suite bank-disputes --model local --conditions raw,allowed_json --tasks 10 "
        "--out runs/bank-local",
    ),
)


def page(df: Any, specs: Sequence[RunSpec], width: int = PAGE_WIDTH) -> list[str]:
    """What the demo prints after its runs, from their records (`df`, `results.load`) and specs:
    one table of solved/N (suite and condition x player), what it shows and what it does not, the
    run folders and the commands to go on with; the full report is `report` on the folder."""
    players = list(dict.fromkeys(m for s in specs for m in s.models))
    solved = solved_grid(df, players)
    lines = [*_wrap(TITLE, width), *render(solved, width)]
    if solved.harness_errors:
        lines.append(f"({solved.harness_errors} episodes were harness errors: rerun with --retry-errors)")
    for paragraph in _verdict(solved, specs):
        lines += ["", *_wrap(paragraph, width)]
    lines.append("")
    lines += next_steps(specs, width, _cost(df))
    return lines


def _cost(df: Any) -> tuple[float, float] | None:
    """What one bank-disputes episode of the embedded model cost in this demo (seconds of model
    calls, tokens): the cost of the next run the page suggests, measured here, not assumed."""
    mine = df[(df[C.model] == LOCAL_MODEL) & (df[C.suite] == "bank-disputes") & df[C.success].notna()]
    if mine.empty:
        return None
    tokens = (mine[C.prompt_tokens] + mine[C.completion_tokens]).astype(float)
    return float(mine[C.latency_s].astype(float).mean()), float(tokens.mean())


def _verdict(solved: Solved, specs: Sequence[RunSpec]) -> list[str]:
    """What the table shows and what it does not: the models' results, then what the reference agents are for."""
    tasks = min(s.tasks or 0 for s in specs)
    out = []
    for model in (p for p in solved.players if not is_agent(p)):
        won, n = solved.solved.get(model, 0), solved.scored.get(model, 0)
        name = f"{model} (SmolLM2-135M on this CPU)" if model == LOCAL_MODEL else model
        if won == 0:
            out.append(
                f"{name} solved none of its {n} episodes: the demo shows the pipeline running on real parts, "
                "not what feedback does for a model; that needs a larger one (docs/models.md)."
            )
        else:
            out.append(
                f"{name} solved {won} of {n} episodes; {tasks} task{'s' * (tasks != 1)} per suite cannot tell "
                "conditions apart (the full report's CIs say how wide)."
            )
    agents = [p for p in solved.players if is_agent(p)]
    if agents:
        roles = [ROLES.get(a, f"{label(a)} is a plugin's own agent") for a in agents]
        out.append(
            "The reference agents play the same episodes with no model and show what each condition makes "
            f"possible: {'; '.join(roles)}."
        )
    return out


def _wrap(text: str, width: int, indent: str = "") -> list[str]:
    return textwrap.wrap(
        text, width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False
    )


def next_steps(specs: Sequence[RunSpec], width: int = PAGE_WIDTH, cost: tuple[float, float] | None = None) -> list[str]:
    """The run folders and the commands worth trying on them (`report`, `plot` and `export` take
    the folder of both runs); `cost`: the embedded model's seconds and tokens an episode here."""
    folders = []
    pad = max(len(str(s.out)) for s in specs)
    for s in specs:
        unit = ("game" if s.suite == "paper-textworld" else "task") + ("s" if s.tasks != 1 else "")
        what = FOLDER.format(s=s, unit=unit, conditions=len(s.conditions), players=len(s.models))
        line = f"  {s.out:<{pad}} {what}"
        # a long --out goes on a line of its own
        folders += [line] if len(line) <= width else [f"  {s.out}", *_wrap(what, width, "    ")]
    first, parent = specs[0], Path(specs[0].out).parent
    steps = ["Next:"]
    for comment, command in NEXT:
        if "--model local" in command and cost is not None:
            seconds, tokens = cost
            comment += (
                f" (about {seconds:.0f} s and {tokens:,.0f} tokens an episode here, as this demo measured: "
                f"~{20 * seconds / 60:.0f} min)"
            )
        steps += [*_wrap(comment, width, "  # "), *_command(command.format(first=first, parent=parent), width)]
    return [*_wrap(FOLDERS.format(rundir.RECORDS, rundir.META, rundir.TRANSCRIPTS), width), *folders, "", *steps]


def _command(command: str, width: int) -> list[str]:
    """A command as lines to copy into a shell: broken before a flag (with its value), `\\` and an
    indent, where it would be wider than `width`."""
    units: list[str] = []
    for word in (shlex.quote(w) for w in shlex.split(command)):
        if units and not word.startswith("--") and units[-1].startswith("--") and " " not in units[-1]:
            units[-1] += " " + word  # a flag and its value stay on one line
        else:
            units.append(word)
    lines, line = [], "  " + units[0]
    for unit in units[1:]:
        if unit.startswith("--") and len(line) + 1 + len(unit) + 2 > width:
            lines.append(line + " \\")
            line = "      " + unit
        else:
            line += " " + unit
    return [*lines, line]
