"""What run.json says of how each model was served: the concurrency it ran at (harness.serving.batch) and
the preflight's warnings (a server not deterministic at temperature 0). Read from run.json only.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from results import run_meta
from results.errors import RecordsError


def _concurrency(entry: Any) -> str | None:
    if not isinstance(entry, dict):
        return None
    if entry.get("mode") == "fixed":
        return f"{entry.get('workers')} at a time"
    if entry.get("mode") == "adaptive":
        return (
            f"adaptive to the server's batch: {entry.get('start')} at first, up to {entry.get('peak')}, "
            f"{entry.get('final')} at the end (bound {entry.get('bound')}, {entry.get('backoffs')} back-offs)"
        )
    if entry.get("mode") == "per endpoint":
        return "; ".join(filter(None, (_concurrency(e) for e in entry.get("endpoints", [])))) + " (per endpoint)"
    return None


def notes(run_dirs: Iterable[str]) -> dict[str, Any]:
    """{"concurrency": {model: text}, "nondeterministic": [model]} over the runs' sessions (the
    latest session that says it, per model); empty where run.json says nothing of it."""
    concurrency: dict[str, str] = {}
    nondeterministic: set[str] = set()
    for run_dir in run_dirs:
        try:
            meta = run_meta.read_meta(run_dir) or {}
        except RecordsError:
            continue
        for session in meta.get("sessions") or []:
            for model, entry in (session.get("concurrency") or {}).items():
                if (text := _concurrency(entry)) is not None:
                    concurrency[model] = text
            for model, served in (session.get("served") or {}).items():
                for result in (served or {}).get("preflight") or []:
                    if ((result.get("checks") or {}).get("determinism") or {}).get("status") == "warn":
                        nondeterministic.add(model)
    out: dict[str, Any] = {}
    if concurrency:
        out["concurrency"] = dict(sorted(concurrency.items()))
    if nondeterministic:
        out["nondeterministic"] = sorted(nondeterministic)
    return out
