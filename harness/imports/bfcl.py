"""`import bfcl`: BFCL's multi-turn result files as records, one per entry.

Each entry's recorded calls (BFCL's own decoding of each answer, harness.imports.bfcl_format) are
played again on BFCL's backends by the one loop, as our BFCL suites play an agent: the test entry
and its ground truth from the installed bfcl-eval, each call judged by our contract (a Violation
carrying, as `raw`, what BFCL told the model), success by BFCL's own checker. The condition is
`bfcl-native`, BFCL's own text, so a fork can replay the conversation as the model saw it.

The entries are played under BFCL's own protocol (the suite's `protocol=bfcl`): every call of a
step runs in order whatever the one before returned, a call fails where BFCL's execution failed,
and a turn's 21st step with calls force-quits the entry, as BFCL's handler does.

The model is named by the file's folder (`result/<model>/...`, or `result/<model>/multi_turn/...`)
or by `--model`. The budget of every imported episode is BFCL's: at most 21 steps a turn (its
force-quit after `MAXIMUM_STEP_LIMIT` = 20) times the most turns an entry has, so that imports of
all categories pool. Entries the bfcl-eval replayed on does not know, or holds with other questions
(a v3 file against v4 data), are named and skipped, never replayed on the wrong task. That release is
the installed one, or another one in a worker of its own (`--bfcl-version`, harness.imports.versions).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from envs.bfcl import data
from envs.bfcl.backends import Backends, functions
from envs.contract import Task
from harness.imports import Importer
from harness.imports.bfcl_format import ANY_BFCL, NAME, Entry, NotBfcl, Undecodable, handler, published, read_entry
from harness.imports.inputs import text_lines
from harness.imports.play import Batch, Recorded
from harness.run_spec import RunSpec
from harness.types import ModelTurn, Usage
from results.run_meta import read_meta
from results.rundir import once

CONDITION = "bfcl-native"
PROTOCOL = {"protocol": "bfcl"}  # the suite's options an import plays under (envs.bfcl.suite)
# folders BFCL's newer layout puts between the model's folder and its files
_GROUPING = frozenset({"multi_turn", "live", "non_live", "agentic", "result"})
# the skip reasons a release's other data gives (`--bfcl-version auto` looks for one without them)
OTHER_QUESTIONS, OTHER_STATE = "asked other questions", "started from another state"


def budget() -> int:
    """BFCL's most steps an entry can take: 21 a turn, times the most turns of any category."""
    return data.most_steps()  # read in place: a copy of every entry of every category was 30 ms a batch


def model_of(path: Path) -> str:
    folder = path.parent
    return folder.parent.name if folder.name in _GROUPING else folder.name


def files(paths: list[Path]) -> tuple[list[Path], list[Path], list[Path]]:
    """The multi-turn result files and score files the paths name (a folder: every one under it),
    and the other BFCL files found there (single-turn categories: not this importer's)."""
    results: list[Path] = []
    scores: list[Path] = []
    others: list[Path] = []
    for p in paths:
        if not p.exists():
            raise NotBfcl(f"{p}: no such file or folder")
        found = sorted(p.rglob("BFCL_*.json")) if p.is_dir() else [p]
        for f in found:
            m = NAME.match(f.name)
            if m is None:
                if p.is_dir() and ANY_BFCL.match(f.name):
                    others.append(f)
                    continue
                raise NotBfcl(
                    f"{f}: not a BFCL multi-turn result file (its name is not "
                    "BFCL_v<N>_multi_turn_{base,miss_param,miss_func,long_context}_result.json)"
                )
            (results if m.group(3) == "result" else scores).append(f)
    if not results:
        raise NotBfcl(f"{', '.join(map(str, paths))}: no BFCL multi-turn result file there")
    return once(results), once(scores), once(others)  # a file named twice (`m/F m ./m`) is read once


def _named(path: Path) -> tuple[str, str]:
    """A file's BFCL version and category, from its name (files() kept only names that give them)."""
    m = NAME.match(path.name)
    assert m is not None
    return m.group(1), m.group(2)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _differs(entry: Entry, installed: dict[str, Any]) -> bool:
    """Whether the file's entry asked other questions than the installed one (turns where the
    installed entry has a question of its own; a held-back function's turn has none)."""
    for query, question in zip(entry.queries, installed["question"], strict=False):
        asked = [str(m["content"]) for m in question if m.get("role") != "system"]
        if query is not None and asked and query != asked:
            return True
    return False


def _plain(value: Any) -> Any:
    """A state as BFCL's log writes it: JSON, objects as their `str`."""
    return json.loads(json.dumps(value, default=str))


def _state_differs(entry: Entry, installed: dict[str, Any], category: str) -> bool:
    """Whether BFCL logged another starting state than the installed entry's backends have (a
    scenario changed between versions: the same question, other files or balances)."""
    if not entry.initial:
        return False
    # only read: no sidecar (a fork) for them
    backends = Backends(
        installed["involved_classes"], installed.get("initial_config", {}), category == "long_context", sidecar=False
    )
    for cls, theirs in entry.initial.items():
        instance = backends.instances.get(cls)
        ours = None if instance is None else {k: v for k, v in vars(instance).items() if not k.startswith("_")}
        if _plain(ours) != _plain(theirs):
            return True
    return False


def _turns(entry: Entry, model: str) -> tuple[list[ModelTurn], list[str], list[int]]:
    """The steps as the model's answers, BFCL's texts for their calls in order, and for each call
    the answer it belongs to."""
    turns: list[ModelTurn] = []
    said: list[str] = []
    answer_of: list[int] = []
    for steps in entry.turns:
        for step in steps:
            answer_of.extend([len(turns)] * len(step.calls))
            turns.append(
                ModelTurn(
                    text=step.text,
                    tool_calls=step.calls,
                    usage=Usage(prompt_tokens=step.prompt_tokens, completion_tokens=step.completion_tokens),
                    latency_s=step.latency_s,
                    finish_reason="tool_calls" if step.calls else "stop",
                    parse_error=step.decode_error,
                    model_id=model,
                )
            )
            said.extend(step.said)
    return turns, said, answer_of


def _recorded(entry: Entry, category: str, model: str, source: dict[str, Any], verdicts: Any) -> Recorded:
    # the model's name joins BFCL's instance names, which its execution writes into string arguments
    params = {"entry_id": entry.id, "bfcl_model": model}
    task = Task(suite=_suite(category), task_id=entry.id.removeprefix("multi_turn_"), params=params)
    extra: dict[str, Any] = {"imported": {**source, "line": entry.line}}
    if verdicts is not None:
        failed = verdicts.get(entry.id)
        extra["imported"]["published_valid"] = failed is None
        extra["imported"]["published_error"] = None if failed is None else failed["error_type"]
    if entry.handler_error is not None:
        error = f"BFCL's own inference failed for this entry (not the model's answer): {entry.handler_error}"
        return Recorded(task, [], [], extra, error=error)
    turns, said, answer_of = _turns(entry, model)
    extra["imported"]["closing_steps"] = sum(s.closing for steps in entry.turns for s in steps)
    if not turns:
        return Recorded(task, [], [], extra, error="the entry holds no step")
    return Recorded(task, turns, said if entry.logged else None, extra, answer_of=answer_of)


def printable_name(name: str) -> str:
    """A model folder's name as a model name: control characters (a tab, a newline, an ESC) written
    as JSON escapes (`a\\tb`), surrounding spaces dropped; a name that holds none, as it is."""
    return "".join(c if c.isprintable() else json.dumps(c)[1:-1] for c in name).strip() or json.dumps(name)


def _suite(category: str) -> str:
    return f"bfcl-{category.replace('_', '-')}"


def batches(paths: list[Path], out: Path, model: str | None) -> Iterator[Batch | str]:
    """One batch per (model, category): its run directory is `out/<model>--<suite>`. Lines of
    text between them say what was skipped and why."""
    results, scores, others = files(paths)
    if others:
        yield f"{len(others)} BFCL files of other categories left out (this importer reads multi-turn files)"
    groups: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for f in results:
        groups[(model or model_of(f), _named(f)[1])].append(f)
    verdict_files = {(model or model_of(f), _named(f)[1]): f for f in scores}
    steps = budget()
    method = functions(list(data.CLASSES)).get
    release = data.version()
    for (name, category), paths_of in sorted(groups.items()):
        scored = verdict_files.get((name, category))
        verdicts = published(scored) if scored is not None else None
        episodes: list[Recorded] = []
        skipped: Counter[str] = Counter()
        named: dict[str, list[str]] = defaultdict(list)
        sources = []
        styles: Counter[str] = Counter()  # the steps' handler kinds (bfcl_format.style)
        ids = set(data.entry_ids(category))
        unknown = f"unknown to bfcl-eval {release}"
        shown = printable_name(name)  # a folder named with a tab or an ESC: a model name holds none
        if shown != name:
            yield (
                f"model folder {name!r}: a model name holds no control character or surrounding space; "
                f"recorded as {shown}"
            )
        run_dir = out / f"{shown}--{_suite(category)}"
        _one_release(run_dir, release)
        for f in paths_of:
            version = _named(f)[0]
            source = {"file": f.name, "bfcl_version": version}
            count = 0
            # opened as what it claims (harness.imports.inputs): a FIFO, UTF-16, a 0xFF byte are one line
            with closing(text_lines(f)) as lines:
                for number, line in lines:
                    if not line.strip():
                        continue
                    try:
                        entry = read_entry(line, number, method)
                    except NotBfcl as exc:
                        raise NotBfcl(f"{f}: {exc}") from None
                    except RecursionError:  # json's own limit, raised cleanly: a line no harness wrote
                        raise NotBfcl(f"{f}: line {number} is JSON nested deeper than can be read") from None
                    except (Undecodable, SyntaxError, ValueError) as exc:
                        episodes.append(_undecodable(line, number, category, source, exc))
                        count += 1  # an entry of the file all the same: its harness error stands for it
                        continue
                    count += 1
                    styles.update(entry.styles)
                    if entry.id not in ids:
                        skipped[unknown] += 1
                        named[unknown].append(entry.id)
                        continue
                    installed = data.entry(category, entry.id)
                    why = (
                        f"{OTHER_QUESTIONS} than bfcl-eval {release}'s entry"
                        if _differs(entry, installed)
                        else f"{OTHER_STATE} than bfcl-eval {release}'s entry"
                        if _state_differs(entry, installed, category)
                        else None
                    )
                    if why is not None:
                        skipped[why] += 1
                        named[why].append(entry.id)
                        continue
                    episodes.append(_recorded(entry, category, name, source, verdicts))
            sources.append({"path": str(f), "sha256": _sha256(f), "entries": count, "bfcl_version": version})
        provenance = {
            "format": "bfcl",
            "files": sources,
            "scores": None if scored is None else {"path": str(scored), "sha256": _sha256(scored)},
            "bfcl_eval": release,
            "skipped": dict(skipped),
            "skipped_ids": dict(named),
            "bfcl_runner": runner(handler(styles)),
        }
        spec = RunSpec(
            suite=_suite(category),
            models=[shown],
            conditions=[CONDITION],
            budgets=[steps],
            tool_mode="native",
            env_options=dict(PROTOCOL),
            out=str(run_dir),
        )
        for reason, n in skipped.items():
            listed = ", ".join(named[reason][:5]) + (", ..." if n > 5 else "")
            yield f"{shown} {category}: {n} entries skipped: {reason} ({listed})"
        yield Batch(spec, episodes, provenance)


def runner(kind: str | None) -> dict[str, Any]:
    """How BFCL's runner played the file, for a fork of its import with a served model to play the
    same (harness.fork_spec): its handler's kind as the tool mode (FC: the server's tool calls;
    prompting: calls in the text) and its sampling. None: the file holds no call to tell by."""
    mode = {"FC": "native", "prompting": "prompt"}.get(kind or "")
    return {"handler": kind, "tool_mode": mode, "decoding": dict(data.RUNNER_DECODING)}


def _one_release(run_dir: Path, release: str) -> None:
    """A resumed import replays on the release its run directory's records were replayed on: one
    release's records and another's never pool in a run directory unsaid."""
    meta = read_meta(run_dir)  # run.json checked as every reader checks it: a damaged one is one line
    if meta is None:
        return
    imported = [s["imported"] for s in meta.get("sessions") or [] if isinstance(s.get("imported"), dict)]
    earlier = {str(i["bfcl_eval"]) for i in imported if i.get("bfcl_eval")}
    if earlier - {release}:
        raise NotBfcl(
            f"{run_dir} holds entries replayed on bfcl-eval {', '.join(sorted(earlier))}; this import replays "
            f"on {release}: give another --out, or the same --bfcl-version"
        )


def _undecodable(line: str, number: int, category: str, source: dict[str, Any], exc: Exception) -> Recorded:
    """An entry with a call that cannot be read back safely: a harness error naming it."""
    entry_id = str(json.loads(line).get("id"))
    task = Task(suite=_suite(category), task_id=entry_id.removeprefix("multi_turn_"), params={"entry_id": entry_id})
    return Recorded(
        task, [], [], {"imported": {**source, "line": number}}, error=f"a recorded call cannot be read back: {exc}"
    )


IMPORTER = Importer(
    "bfcl",
    "BFCL multi-turn result files (BFCL_v<N>_multi_turn_<category>_result.json; score files beside them)",
    batches,
)
