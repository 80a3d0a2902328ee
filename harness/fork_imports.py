"""What a fork reads of an import's run.json: whether a source was imported, what its import said,
and the bfcl-eval release it was replayed on (a fork rebuilds and plays there)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.fork import Source


def imported(source: Source) -> bool:
    """Records imported from another harness's transcripts (harness.imports), not played here."""
    return any(isinstance(s, dict) and s.get("imported") for s in source.meta.get("sessions") or [])


def imported_said(source: Source, key: str) -> Any:
    """What the import's last session said under `key` (run.json: `sessions[].imported`; an
    import's sessions all say one); None: no import, or one recorded before it said."""
    said = [
        s["imported"].get(key)
        for s in source.meta.get("sessions") or []
        if isinstance(s, dict) and isinstance(s.get("imported"), dict)
    ]
    return said[-1] if said else None


def release_of(source: Source) -> str | None:
    """The bfcl-eval release an import was replayed on (`imported.bfcl_eval`): a fork rebuilds
    and plays on it."""
    release = imported_said(source, "bfcl_eval")
    return str(release) if release else None
