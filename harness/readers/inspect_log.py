"""Run directories as inspect_ai logs: one `.eval` per (suite, model, condition, budget) cell,
written through inspect_ai's public API (`inspect_ai.log.write_eval_log`), read by `inspect view`.

One sample per record: id = task id, epoch = 1 + the position of its sample seed among the
run's sorted seeds; messages = the conversation as the model saw it, each call's outcome as a tool
message (a rejected call's carries a ToolCallError and the condition's feedback text); a score
`success` (1/0), or the sample's `error` for a harness-error episode (never a 0); token usage per
call in the assistant message's metadata and per sample in `model_usage`. In prompt tool mode the
feedback went out as a user message: its text is exported as the tool message of the call it
answers, and the sample's metadata says so.

The same records give the same files: every id and time comes from the records and run.json,
and the zip entries' timestamps are set to the log's creation time. inspect_ai (2-3 s to import)
is imported only here, only when exporting.
"""

from __future__ import annotations

import gc
import hashlib
import json
import sys
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from importlib.metadata import version
from pathlib import Path
from typing import Any

from envs.errors import UserError
from harness.errors import StorageError
from harness.readers.inspect_messages import inspect_model, messages
from harness.rundir.files import storage_guard, written_whole
from harness.rundir.targets import check_folder
from results import rundir
from results.load import read_records

INSTALL = 'pip install -e ".[inspect]"'
PROMPT_MODE_NOTE = (
    "prompt tool mode: the feedback went out as a user message; here it is the tool message "
    "of the call it answers, built from that call's outcome"
)


def _inspect() -> Any:
    try:
        # the [inspect] extra
        import inspect_ai.log as log
    except ImportError:
        raise UserError(f"export --inspect needs inspect_ai, which this install lacks: {INSTALL}") from None
    return log


@dataclass
class RunFiles:
    """What one run directory holds for the export."""

    path: Path
    meta: dict[str, Any]
    records: list[dict[str, Any]]
    partial: bool  # a trailing line still being written, or the run's lock is held

    @cached_property
    def seeds(self) -> list[int]:
        return sorted(self.meta.get("spec", {}).get("sample_seeds") or {r["sample_seed"] for r in self.records})


@dataclass
class Cell:
    suite: str
    model: str
    condition: str
    budget: int
    samples: list[tuple[RunFiles, dict[str, Any]]] = field(default_factory=list)

    def name(self) -> str:
        slug = "".join(ch if ch.isalnum() or ch in "-." else "-" for ch in self.model)
        return f"{self.suite}_{slug}_{self.condition}_b{self.budget}.eval"


def read_run(path: Path) -> RunFiles:
    records, cut = read_records(path)
    meta_file = rundir.meta_file(path)
    meta = json.loads(meta_file.read_text(encoding="utf-8")) if meta_file.exists() else {}
    return RunFiles(path, meta, records, partial=bool(cut) or rundir.in_use(path))


def cells(runs: Iterable[RunFiles]) -> list[Cell]:
    out: dict[tuple, Cell] = {}
    for run in runs:
        for rec in _latest(run.records):
            key = (rec["suite"], rec["model"], rec["condition"], int(rec["budget"]))
            out.setdefault(key, Cell(*key)).samples.append((run, rec))
    return [out[k] for k in sorted(out)]


def _latest(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One record per episode key: a harness error that a resume replayed counts as its replay."""
    keep: dict[tuple, dict[str, Any]] = {}
    for rec in records:
        key = (rec["suite"], rec["task_id"], rec["model"], rec["condition"], rec["budget"], rec["sample_seed"])
        if key not in keep or keep[key].get("success") is None:
            keep[key] = rec
    return list(keep.values())


def _created(run: RunFiles) -> str:
    sessions = run.meta.get("sessions") or [{}]
    return sessions[0].get("started_at") or "1970-01-01T00:00:00+00:00"


def _id(*parts: Any) -> str:
    return hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:22]


def _transcript(run: RunFiles, rec: dict[str, Any]) -> dict[str, Any]:
    name = rec.get("transcript") or ""
    path = (run.path / name).resolve()
    # a record names a file of its own run directory, never one elsewhere
    if not name or run.path.resolve() not in path.parents or not path.is_file():
        return {"turns": []}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"turns": []}


def sample(run: RunFiles, rec: dict[str, Any]) -> Any:
    log, m = _inspect(), inspect_model()
    # the [inspect] extra
    from inspect_ai.scorer import Score

    model_id = rec.get("model_id") or rec["model"]
    # the run's config holds the tool mode; records written before it did kept it in condition_params
    settings = rec.get("config") or {}
    prompt_mode = settings.get("tool_mode", (rec.get("condition_params") or {}).get("tool_mode")) == "prompt"
    transcript = _transcript(run, rec)
    msgs = messages(transcript, model_id)
    error = rec.get("harness_error")
    prompt, completion = rec.get("prompt_tokens"), rec.get("completion_tokens")
    usage = (
        {}
        if prompt is None and completion is None
        else {
            model_id: m.ModelUsage(
                input_tokens=prompt or 0, output_tokens=completion or 0, total_tokens=(prompt or 0) + (completion or 0)
            )
        }
    )
    metadata = {
        "condition": rec["condition"],
        "budget": rec["budget"],
        "sample_seed": rec["sample_seed"],
        "model": rec["model"],
        "failure_codes": rec.get("failure_codes") or [],
        "final_failure": rec.get("final_failure"),
        "first_call_valid": rec.get("first_call_valid"),
        "repaired": rec.get("repaired"),
        "model_calls": rec.get("model_calls"),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "prompt_words": rec.get("prompt_words"),
        "end_reason": rec.get("end_reason"),
        "run_dir": str(run.path),
        "transcript": rec.get("transcript"),
    }
    if prompt_mode:
        metadata["feedback_as"] = PROMPT_MODE_NOTE
    first_user = next((x.text for x in msgs if x.role == "user"), "")
    last = next((x for x in reversed(msgs) if x.role == "assistant"), None)
    output = m.ModelOutput(model=model_id, choices=[m.ChatCompletionChoice(message=last)] if last else [])
    seed = rec["sample_seed"]
    return log.EvalSample(
        id=rec["task_id"],
        epoch=1 + run.seeds.index(seed) if seed in run.seeds else 1,
        input=first_user,
        target="",
        messages=msgs,
        output=output,
        scores=None if error else {"success": Score(value=1 if rec.get("success") else 0)},
        metadata=metadata,
        model_usage=usage,
        uuid=_id(
            run.path.name,
            rec["run_id"],
            rec["task_id"],
            rec["model"],
            rec["condition"],
            rec["budget"],
            rec["sample_seed"],
        ),
        error=log.EvalError(message=error, traceback=error, traceback_ansi=error) if error else None,
    )


def eval_log(cell: Cell, versions: dict[str, str]) -> Any:
    log = _inspect()
    runs = {id(r): r for r, _ in cell.samples}
    first = next(iter(runs.values()))
    created = min(_created(r) for r in runs.values())
    samples = [
        sample(run, rec) for run, rec in sorted(cell.samples, key=lambda x: (x[1]["task_id"], x[1]["sample_seed"]))
    ]
    scored = [s for s in samples if s.scores]
    solved = sum(s.scores["success"].value for s in scored)
    spec = first.meta.get("spec") or {}
    sessions = first.meta.get("sessions") or [{}]
    results = log.EvalResults(
        total_samples=len(samples),
        completed_samples=len(scored),
        scores=[
            log.EvalScore(
                name="success",
                scorer="success",
                metrics={"accuracy": log.EvalMetric(name="accuracy", value=solved / len(scored) if scored else 0.0)},
            )
        ],
    )
    return log.EvalLog(
        status="success" if len(scored) == len(samples) else "error",
        eval=log.EvalSpec(
            eval_id=_id("eval", cell.name()),
            run_id=str(first.meta.get("run_id") or ""),
            created=created,
            # one task id per cell: the viewer folds logs of one task id and model into "retries"
            task=cell.suite,
            task_id=_id("task", cell.name()),
            task_args={"condition": cell.condition, "budget": cell.budget},
            dataset=log.EvalDataset(name=cell.suite, samples=len({s.id for s in samples})),
            model=cell.model,
            config=log.EvalConfig(),
            packages=versions,
            metadata={
                "condition": cell.condition,
                "budget": cell.budget,
                "spec": spec,
                "versions": sessions[-1].get("versions"),
                "git": sessions[-1].get("git"),
                "run_dirs": sorted(str(r.path) for r in runs.values()),
            },
        ),
        results=results,
        stats=log.EvalStats(started_at=created, completed_at=created, model_usage=_usage(samples)),
        samples=samples,
    )


@dataclass
class Exported:
    files: list[Path]
    runs: list[RunFiles]
    samples: int
    records: int


def _usage(samples: list[Any]) -> dict[str, Any]:
    # the [inspect] extra
    from inspect_ai.model import ModelUsage

    total: dict[str, Any] = {}
    for s in samples:
        for model, u in s.model_usage.items():
            t = total.setdefault(model, ModelUsage())
            t.input_tokens += u.input_tokens
            t.output_tokens += u.output_tokens
            t.total_tokens += u.total_tokens
    return total


def export(run_dirs: Sequence[Path], out_dir: Path) -> Exported:
    """Write one log per cell into `out_dir`."""
    log = _inspect()

    runs = [read_run(Path(d)) for d in run_dirs]
    versions = {"inspect_ai": version("inspect_ai")}
    planned = cells(runs)
    check_folder(out_dir, run_dirs, "--inspect", (cell.name() for cell in planned))
    with storage_guard(out_dir):  # a folder above it that is a file, a name too long: one line
        out_dir.mkdir(parents=True, exist_ok=True)
    written, samples = [], 0
    for cell in planned:
        samples += len(cell.samples)
        path = out_dir / cell.name()
        built = eval_log(cell, versions)
        try:
            with written_whole(path) as part:  # a full disk leaves no half-written log
                log.write_eval_log(built, str(part), format="eval")
                _fix_zip_times(part, built.eval.created)
        except StorageError:
            _collect_quietly()
            raise
        written.append(path)
    return Exported(written, runs, samples, sum(len(r.records) for r in runs))


def _collect_quietly() -> None:
    """inspect_ai's log writer, left open by the failed write, closes when it is collected (here at
    the latest when the command exits); its closing error, the same full disk already said in one
    line, is not printed again as a traceback. Nothing else's unraisable errors are touched."""
    hook = sys.unraisablehook

    def quiet(u: Any) -> None:
        if not (isinstance(u.exc_value, OSError) and getattr(u.object, "__qualname__", "") == "ZipLogFile.__del__"):
            hook(u)

    sys.unraisablehook = quiet
    gc.collect()


def _fix_zip_times(path: Path, created: str) -> None:
    """The zip entries' times set to the log's creation time (zipfile stamps them with the clock),
    so that exporting twice gives the same bytes. Entries are copied as they are, compressed alike."""
    stamp = datetime.fromisoformat(created).timetuple()[:6]
    stamp = max(stamp, (1980, 1, 1, 0, 0, 0))
    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w") as dst:
        for info in src.infolist():
            copy = zipfile.ZipInfo(info.filename, date_time=stamp)
            copy.compress_type, copy.external_attr = info.compress_type, info.external_attr
            dst.writestr(copy, src.read(info.filename))
    tmp.replace(path)
