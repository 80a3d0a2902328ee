"""What an import is, at a glance: per model and suite, the entries its files held, how many were
replayed, skipped (by cause) or ended in a harness error, how faithful each replay was to the
conversation the file logged, and whether BFCL's checker here agrees with the published score file.

An import (`repair-harness import`) writes one run directory per model and suite. Its run.json's
session keeps the import's provenance (`imported`: the files with their entries and BFCL version,
the score file, the bfcl-eval release replayed on, the entries skipped by cause and their ids),
and each record's `extra` keeps the entry's source (`imported`: file, line, `published_valid`
where a score file came) and the replay's counters (`replay`: `faithful` true, false or null when
the entry logged nothing to compare with, `divergence`). `found` reads run.json, a run directory
with no record included (an import whose entries were all skipped); `rows` joins it with the
records. A record without `faithful` (an import older than that field) counts as unknown, never
as faithful. Read from files beside the records only; nothing here imports the harness.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from results import run_meta, rundir
from results.columns import C
from results.errors import RecordsError

IMPORTED, REPLAY = f"{C.extra}.imported", f"{C.extra}.replay"
# the record columns `rows` reads, besides the key fields and success (results.report asks load for them)
COLUMNS = (IMPORTED, REPLAY, "run_dir")


@dataclass(frozen=True)
class ImportedRun:
    """One import's run directory, as its run.json tells it."""

    run_dir: str
    model: str
    suite: str
    provenance: dict[str, Any]  # the latest session's `imported`, as run.json holds it
    recorded: bool  # records.jsonl holds a record (an import whose entries were all skipped holds none)


def provenance(meta: dict[str, Any]) -> dict[str, Any] | None:
    """The import's provenance in a run.json (its latest session's `imported`); None: no import."""
    sessions = [s["imported"] for s in meta.get("sessions") or [] if isinstance(s.get("imported"), dict)]
    return sessions[-1] if sessions else None


def _candidates(paths: Iterable[Path]) -> list[Path]:
    """The run directories the paths may name: each path with a run.json, or those inside a folder."""
    out: list[Path] = []
    for p in paths:
        p = p.parent if rundir.is_records_file(p) else p
        if rundir.meta_file(p).exists():
            out.append(p)
        elif p.is_dir():
            out.extend(sorted(m.parent for m in p.glob(f"*/{rundir.META}")))
    return out


def found(paths: Iterable[str | Path]) -> list[ImportedRun]:
    """The imports among the run directories the paths name (a folder: those inside it), those
    without records included. A run.json that cannot be read is left to `load` to name (a run
    directory with records), or passed over (one without: not a run any command reads)."""
    runs: dict[str, ImportedRun] = {}  # a run directory named twice (itself and its folder) is one
    for run_dir in _candidates(map(Path, paths)):
        recorded = rundir.recorded_any(run_dir)
        try:
            meta = run_meta.read_meta(run_dir) or {}
        except RecordsError:
            continue
        source, spec = provenance(meta), meta.get("spec") or {}
        if source is not None and isinstance(spec.get("suite"), str) and spec.get("models"):
            model = str(spec["models"][0])
            runs.setdefault(str(run_dir), ImportedRun(str(run_dir), model, spec["suite"], source, recorded))
    return list(runs.values())


def loadable(paths: Iterable[str | Path], imported: Iterable[ImportedRun]) -> list[Path]:
    """`results.rundir.run_dirs(paths)`, less the imports without records: their run.json is all
    there is to report (`rows`), and `load` would refuse them. A folder that holds runs of no
    record but such imports goes too."""
    empty = {Path(r.run_dir) for r in imported if not r.recorded}
    kept = []
    for d in rundir.run_dirs(paths):
        run_dir = d.parent if rundir.is_records_file(d) else d
        if run_dir in empty or (rundir.is_folder_of_runs(d) and any(e.parent == d for e in empty)):
            continue
        kept.append(d)
    return kept


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _provenance(runs: list[ImportedRun]) -> dict[str, Any]:
    """The run.json side of one model and suite (several run directories: summed)."""
    files = [f for r in runs for f in r.provenance.get("files") or [] if isinstance(f, dict)]
    counts = [f.get("entries") for f in files]
    skipped: Counter[str] = Counter()
    skipped_ids: dict[str, list[str]] = {}
    for r in runs:
        skipped.update({str(k): v for k, v in _dict(r.provenance.get("skipped")).items() if isinstance(v, int)})
        for cause, ids in _dict(r.provenance.get("skipped_ids")).items():
            skipped_ids.setdefault(str(cause), []).extend(map(str, ids))
    scores = [str(_dict(r.provenance.get("scores")).get("path")) for r in runs if r.provenance.get("scores")]
    releases = sorted({str(r.provenance["bfcl_eval"]) for r in runs if r.provenance.get("bfcl_eval")})
    return {
        "format": ", ".join(sorted({str(r.provenance.get("format")) for r in runs})),
        "run_dirs": [r.run_dir for r in runs],
        "files": [{k: f.get(k) for k in ("path", "bfcl_version", "entries")} for f in files],
        "entries": sum(counts) if counts and all(isinstance(n, int) for n in counts) else None,
        "skipped": sum(skipped.values()),
        "skipped_by_cause": dict(skipped),
        "skipped_ids": skipped_ids,
        "bfcl_eval": ", ".join(releases) or None,
        "score_files": scores,
    }


# the fields of a record's `extra.replay` (harness.imports.play) read here: other keys than the record's own
FAITHFUL, DIVERGENCE, CALLS = "faithful", "divergence", "calls"
UNKNOWN = object()  # what a record older than the replay's `faithful` field holds in it


def _fidelity(played: pd.DataFrame) -> dict[str, Any]:
    """The replayed records by faithfulness: every call as logged, diverged, no log (unverified),
    unknown; and where each that diverged did so first."""
    replay = played[REPLAY].map(_dict) if REPLAY in played else pd.Series([{}] * len(played), index=played.index)
    faithful = replay.map(lambda r: r.get(FAITHFUL, UNKNOWN))
    diverged = played.loc[faithful.map(lambda v: v is False).astype(bool)]
    divergences = []
    for task, r in zip(diverged[C.task_id], replay[diverged.index], strict=True):
        first = _dict(r.get(DIVERGENCE))
        divergences.append({"task_id": str(task), "call": first.get("call"), "cause": first.get("cause")})
    calls = replay.map(lambda r: r.get(CALLS)).dropna()
    return {
        "faithful": int(faithful.map(lambda v: v is True).sum()),
        "diverged": len(diverged),
        "unverified": int(faithful.map(lambda v: v is None).sum()),
        "fidelity_unknown": int(faithful.map(lambda v: v is UNKNOWN).sum()),
        "divergences": divergences,
        "calls": int(calls.sum()) if len(calls) else None,
    }


def _agreement(played: pd.DataFrame, scored: bool) -> dict[str, Any]:
    """BFCL's checker here (the record's success: its verdict, a force-quit lost as BFCL scores it)
    against the published score file's verdict, over the entries both judged."""
    if not scored:
        return {"verdicts": None, "agree": None, "disagree_ids": []}
    published = (
        played[IMPORTED].map(lambda v: _dict(v).get("published_valid"))
        if IMPORTED in played
        else pd.Series([None] * len(played), index=played.index, dtype=object)
    )
    both = played.loc[published.map(lambda v: isinstance(v, bool)).astype(bool)]
    same = both[C.success].astype(bool) == published[both.index].astype(bool)
    return {
        "verdicts": len(both),
        "agree": int(same.sum()),
        "disagree_ids": [str(t) for t in both.loc[~same, C.task_id]],  # in the records' order
    }


def rows(df: pd.DataFrame, imported: Iterable[ImportedRun]) -> list[dict[str, Any]]:
    """One row per model and suite of the imports: run.json's provenance (entries, skipped by
    cause, the bfcl-eval release, the score file) beside what the records hold (replayed, harness
    errors, fidelity, agreement with the published verdicts). None without imports."""
    by_cell: dict[tuple[str, str], list[ImportedRun]] = {}
    for run in imported:
        by_cell.setdefault((run.model, run.suite), []).append(run)
    out = []
    for (model, suite), runs in sorted(by_cell.items()):
        dirs = {r.run_dir for r in runs}
        mine = df[df["run_dir"].isin(dirs)] if "run_dir" in df and len(df) else df.iloc[0:0]
        mine = mine[(mine[C.model] == model) & (mine[C.suite] == suite)]
        played = mine[mine[C.success].notna()]
        source = _provenance(runs)
        out.append(
            {
                C.model: model,
                C.suite: suite,
                **source,
                "replayed": len(played),
                "harness_errors": len(mine) - len(played),
                **_fidelity(played),
                **_agreement(played, bool(source["score_files"])),
            }
        )
    return out
