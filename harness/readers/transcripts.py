"""One episode's transcript made readable: which episode of a run, and its conversation as blocks
to print (what `repair-harness show` prints with rich).

A transcript holds, per model call, the messages it added (`harness.loop` writes them,
`harness.loop.full_messages` rebuilds what was sent), the answer and what the environment made of
it. Printed in full, each call would repeat the prompt; here the opening is shown once and each
later call shows only what is new: what the condition told the agent. Model output is untrusted:
`visible` shows its control characters as \\xNN, and every piece of a block goes through it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from envs.errors import UserError
from harness.loop import full_messages
from results import rundir
from results.columns import AGENT_PREFIX, C

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

# what a piece of a block is, for the printer's styles: plain text, a name or verdict to stress,
# an aside, an accepted call, a rejected one
PLAIN, STRONG, ASIDE, GOOD, BAD = "", "strong", "aside", "good", "bad"
Piece = tuple[Any, str]  # (text, or a value shown as JSON; what it is)


@dataclass(frozen=True)
class Block:
    """A line (`kind` "line") or a panel: the opening sent ("sent"), a review prompt ("review"),
    what the condition told the agent ("told"), the model's answer ("answer"); `pieces` are
    (text, what it is), shown through `visible`."""

    kind: str
    pieces: tuple[Piece, ...]
    title: str = ""
    subtitle: str = ""


def visible(value: Any) -> str:
    """Text as-is (a non-string as JSON), with terminal control characters shown as \\xNN."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def episode_records(run_dir: Path) -> list[dict[str, Any]]:
    """The run directory's records, read by the one reader of run directories (results.load)."""
    from results.load import iter_records  # pandas: only when an episode is shown

    if not rundir.is_run_dir(run_dir):
        inside = [d for d in rundir.run_dirs([run_dir]) if d != run_dir]
        if inside:  # a folder of runs (runs/demo): one episode is in one of them
            names = ", ".join(str(d) for d in inside[:10]) + (", ..." if len(inside) > 10 else "")
            raise UserError(f"{run_dir} is a folder of runs; show one of them: {names}")
        raise UserError(f"{run_dir}: no {rundir.RECORDS} (not a run directory, or nothing ran yet)")
    rows = list(iter_records(run_dir))
    if not rows:
        raise UserError(f"{rundir.records_file(run_dir)}: no records")
    return rows


def pick(
    records: list[dict[str, Any]], asked: Mapping[str, Any], names: Mapping[str, str], where: Path
) -> tuple[dict[str, Any], int]:
    """The first record whose fields have the values asked (None: any), and how many match; a
    UserError names the value that no record has (`names`: what the user calls each field). A
    condition answers to any of its names (results.spellings: an alias, its composition spelled)."""
    if asked.get(C.condition) is not None:
        from results.spellings import setting_of, shown_as  # conditions' registry: only when asked

        params = {str(r[C.condition]): setting_of(r.get(C.condition_params) or {}) for r in records}
        condition = str(asked[C.condition])
        asked = {**asked, C.condition: shown_as(condition, params) or condition}
    picked = [r for r in records if all(v is None or r[k] == v for k, v in asked.items())]
    if not picked:
        for key, value in asked.items():
            known = list(dict.fromkeys(r[key] for r in records))
            if value is not None and value not in known:
                raise UserError(
                    f"no episode with {names[key]} {value!r} in {where}; recorded: "
                    f"{', '.join(map(str, known[:20]))}" + (", ..." if len(known) > 20 else "")
                )
        raise UserError(
            f"no episode in {where} matches " + " ".join(f"{names[k]} {v}" for k, v in asked.items() if v is not None)
        )
    models = list(dict.fromkeys(r[C.model] for r in picked))
    if asked.get(C.model) is None and len(models) > 1:
        # the reference agents share a run's folder with the model: which one is meant must be said
        raise UserError(
            f"{where} holds the episodes of {len(models)} models: {', '.join(models)}; "
            f"pick one with {names[C.model]} (e.g. {names[C.model]} {models[0]})"
        )
    return picked[0], len(picked)


def read_transcript(run_dir: Path, record: dict[str, Any]) -> dict[str, Any]:
    if not record.get(C.transcript):
        raise UserError(f"the episode has no transcript ({record.get(C.harness_error) or 'not written'})")
    path = run_dir / str(record[C.transcript])
    inside = rundir.transcripts_dir(run_dir).resolve()
    if inside not in path.resolve().parents:  # a hand-edited record names a file elsewhere
        raise UserError(f"the record's transcript {record[C.transcript]!r} is not in {run_dir}'s transcripts folder")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot read the transcript {path}: {exc}") from None


def header(r: dict[str, Any], matches: int, narrow: str) -> list[Block]:
    """The episode's key and result; `narrow` names the options that pick among several matches."""
    result = "harness error" if r[C.success] is None else ("solved" if r[C.success] else "not solved")
    failure = f"; final failure {r[C.final_failure]}" if r.get(C.final_failure) else ""
    # in the run's config; records written before it was kept there had it in condition_params
    mode = (r.get(C.config) or {}).get("tool_mode", (r.get(C.condition_params) or {}).get("tool_mode"))
    lines = [
        (
            (r[C.task_id], STRONG),
            (f"  {r[C.suite]}, model {r[C.model]}, condition ", PLAIN),
            (r[C.condition], STRONG),
            (f", budget {r[C.budget]}, seed {r[C.sample_seed]}", PLAIN),
        ),
        ((f"{result} ({r[C.end_reason]}) after {_calls(r)}{failure}", PLAIN),),
        ((f"(tool mode {mode}: the tool schemas sent with every call are not repeated here)", ASIDE),),
    ]
    origin = r.get(C.fork_of)
    if isinstance(origin, dict):
        lines.append(
            (
                (f"a fork of {origin.get('model')}'s episode under {origin.get('condition')} (run ", ASIDE),
                (
                    f"{origin.get('run_id')}), from its failed call "
                    f"{int(origin.get('call', 0)) + 1}{_within(origin)}: ",
                    ASIDE,
                ),
                (
                    f"{r.get(C.prefix_calls)} call{'' if r.get(C.prefix_calls) == 1 else 's'} replayed, not paid "
                    "for; the count above is the fork's own",
                    ASIDE,
                ),
            )
        )
    if matches > 1:
        lines.append(((f"({matches} episodes match; this is the first: narrow with {narrow})", ASIDE),))
    return [Block("line", line) for line in lines]


def _calls(r: dict[str, Any]) -> str:
    """ "3 model calls", "1 model call"; a reference agent's are calls (it is no model)."""
    n = r.get(C.model_calls)
    kind = "call" if str(r.get(C.model, "")).startswith(AGENT_PREFIX) else "model call"
    return f"{n} {kind}{'' if n == 1 else 's'}"


def new_part(
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


def conversation(transcript: dict[str, Any], condition: str, player: str = "") -> list[Block]:
    """Each call's new messages, the model's answer and the outcome, in order; then the
    transcript's harness error, if any. `player`: the record's model (a reference agent's answers
    are titled with its name: it is no model)."""
    turns = transcript.get("turns", [])
    blocks: list[Block] = []
    before: list[dict[str, Any]] = []
    opening: list[dict[str, Any]] = []
    previous_answer = ""
    rejected = False  # whether the previous call's outcome was a rejection the condition rendered
    action = 0
    for turn, full in zip(turns, full_messages(turns), strict=True):
        # a review turn is shown by what it added; an action turn by its whole conversation
        review = turn.get("kind") == "review"
        sent = turn.get("messages", []) if review else full
        if review:
            blocks += [
                Block("review", ((text, PLAIN),), f"review prompt ({condition})")
                for _role, text in new_part(sent, [], [], previous_answer)
            ]
        elif not before:
            opening = sent
            blocks += [Block("sent", ((str(m.get("content") or ""), PLAIN),), f"sent: {m.get('role')}") for m in sent]
        else:
            # a fork's replayed calls were told under its source's condition; an accepted call's
            # answer is the environment's (a tool's result, a simulated user's reply), not feedback
            said = "the source's condition" if turn.get("replayed") else condition
            blocks += [
                Block(
                    "told",
                    ((text, PLAIN),),
                    f"told the agent ({said}, as {role})" if rejected else f"the environment answered (as {role})",
                )
                for role, text in new_part(sent, before, opening, previous_answer)
            ]
        if not review:
            action += 1
            before = sent
        answer = turn.get("answer") or {}
        blocks.append(_answer(answer, action, turn.get("kind", "action"), bool(turn.get("replayed")), player))
        previous_answer = answer.get("text") or ""
        if "outcome" in turn:
            blocks.append(Block("line", _outcome(turn["outcome"])))
            rejected = isinstance(turn["outcome"], dict) and "code" in turn["outcome"]
    if transcript.get("harness_error"):
        blocks.append(Block("line", ((f"harness error: {transcript['harness_error']}", BAD),)))
    return blocks


def _answer(a: dict[str, Any], n: int, kind: str, replayed: bool = False, player: str = "") -> Block:
    pieces: list[Piece] = [(a["text"], PLAIN)] if a.get("text") else []
    for c in a.get("tool_calls") or []:
        if pieces:
            pieces.append(("\n", PLAIN))
        pieces += [("call ", STRONG), (f"{c.get('name')}({json.dumps(c.get('arguments'), ensure_ascii=False)})", PLAIN)]
    if a.get("parse_error"):  # inside the box, where it wraps: a border would cut it
        pieces += [("\n" if pieces else "", PLAIN), ("parse error: ", BAD), (str(a["parse_error"]), PLAIN)]
    usage = a.get("usage") or {}
    facts = [
        f"{usage.get('prompt_tokens', '?')}+{usage.get('completion_tokens', '?')} tokens",
        f"finish {a.get('finish_reason')}",
    ] + (["truncated"] if a.get("truncated") else [])
    agent = player.startswith(AGENT_PREFIX)
    who = (
        "the source's player answered (replayed)"
        if replayed
        else f"{player} answered (reference agent)"
        if agent
        else "the model answered"
    )
    title = f"call {n}: {who}" + (" (review)" if kind == "review" else "")
    return Block("answer", tuple(pieces) or (("(empty answer)", ASIDE),), title, ", ".join(facts))


def _outcome(o: dict[str, Any]) -> tuple[Piece, ...]:
    if "observation" in o:  # accepted
        end = " — game won" if o.get("won") else " — lost" if o.get("lost") else " — done" if o.get("done") else ""
        return ("accepted", GOOD), (end + ": ", PLAIN), (o.get("observation", ""), PLAIN)
    pieces: list[Piece] = [
        ("rejected ", BAD),
        (o.get("code", "?"), STRONG),
        (": ", PLAIN),
        (o.get("message", ""), PLAIN),
    ]
    if o.get("location"):
        pieces.append((f" (at {o['location']}, observed {json.dumps(o.get('observed'), ensure_ascii=False)})", PLAIN))
    return tuple(pieces)


def _within(origin: dict[str, Any]) -> str:
    """Which call of the failed answer the fork repairs: ` (its call 2, cd)`; "" where not known."""
    within, tool = origin.get("within"), origin.get("tool")
    if within is None:
        return ""
    return f" (its call {int(within) + 1}{', ' + str(tool) if tool else ''})"
