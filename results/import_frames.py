"""What an import is, at a glance (results.imports), as display strings, and the notes under it."""

from __future__ import annotations

import pandas as pd

from results.columns import C
from results.report_model import ImportRow, Report

# an import's ids named under its table: a few, then how many more
SHOWN_IDS = 5


def _few(ids: list[str]) -> str:
    more = len(ids) - SHOWN_IDS
    return ", ".join(ids[:SHOWN_IDS]) + (f" and {more} more (--format json lists them)" if more > 0 else "")


FIDELITY = "faithful / diverged / unverified"
AGREES = "agrees with score file"


def _fidelity(r: ImportRow) -> str:
    """faithful / diverged / unverified, adding up to `replayed`; "unknown" for an import made
    before the replay was compared with the log (records without the fields), and so many unknown
    where some are."""
    if r.fidelity_unknown and r.fidelity_unknown == r.replayed:
        return "unknown"
    counts = f"{r.faithful}/{r.diverged}/{r.unverified}"
    return counts + (f", {r.fidelity_unknown} unknown" if r.fidelity_unknown else "")


def imports_frame(report: Report) -> pd.DataFrame:
    """What each import is (results.imports): a row per model and suite; none for other runs. The
    bfcl-eval column only where the imports were replayed on several releases (one is a note)."""
    rows = [
        {
            C.model: r.model,
            C.suite: r.suite,
            "entries": "—" if r.entries is None else r.entries,
            "replayed": r.replayed,
            "skipped": r.skipped,
            "harness errors": r.harness_errors,
            FIDELITY: _fidelity(r),
            AGREES: "—" if r.verdicts is None else f"{r.agree}/{r.verdicts}",
            "bfcl-eval": r.bfcl_eval or "—",
        }
        for r in report.imports
    ]
    frame = pd.DataFrame(rows)
    if rows and len({r.bfcl_eval for r in report.imports}) == 1:
        frame = frame.drop(columns="bfcl-eval")
    return frame


def imports_notes(report: Report) -> list[str]:
    """What an import's table cannot hold: the release replayed on (when one), the skipped
    entries by cause, where replays diverged, the entries whose verdict differs from the published one."""
    rows = report.imports
    notes = []
    releases = {r.bfcl_eval for r in rows}
    if len(releases) == 1 and rows:
        versions = sorted({str(f.get("bfcl_version")) for r in rows for f in r.files})
        notes.append(f"replayed on bfcl-eval {rows[0].bfcl_eval or '(not recorded)'} (files: {', '.join(versions)})")
    for r in rows:
        where = f"{r.model} {r.suite}"
        for cause, n in r.skipped_by_cause.items():
            notes.append(f"{where}: skipped {n}, {cause}: {_few(r.skipped_ids.get(cause, []))}")
        if r.divergences:
            firsts = [f"{d.task_id} (call {d.call}{': ' + d.cause if d.cause else ''})" for d in r.divergences]
            notes.append(f"{where}: diverged from the log: {_few(firsts)}")
        if r.disagree_ids:
            notes.append(f"{where}: BFCL's checker here differs from the published score: {_few(r.disagree_ids)}")
    if any(r.fidelity_unknown for r in rows):
        notes.append("unknown: replays of an import made before each replay was compared with the file's log")
    if any(r.verdicts is None for r in rows):
        notes.append(f"{AGREES} —: no score file (BFCL's published verdicts) came with that import")
    return notes


# the "after an error" table's columns, in results.dynamics.NEXT's order
