"""An import played in this process: an importer's batches, each written to its run directory, and
a line for each saying what it wrote. `repair-harness import` runs it here, and a bfcl-eval release
other than the installed one runs it in its worker (harness.imports.worker)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.imports import IMPORTERS
from harness.imports.play import TWICE, Written, write
from harness.printable import console as printable_console


def play_files(
    kind: str, paths: list[Path], out: Path, model: str | None, say: Callable[[str], None]
) -> list[tuple[dict[str, Any], Written]]:
    """Each batch's provenance and what was written for it; lines for the user go to `say`."""
    importer = IMPORTERS.get(kind)
    console = printable_console(stderr=True)
    done = []
    for item in importer.batches(paths, out, model):
        if isinstance(item, str):
            say(item)
            continue
        if not item.episodes and not any((item.provenance.get("skipped") or {}).values()):
            say(f"{item.spec.out}: no entries in its files: nothing written")  # an empty file left an empty run
            continue
        written = write(item, console)
        ends = ", ".join(f"{n} {end}" for end, n in sorted(written.ends.items()))
        already = f"; {written.already} already there" if written.already else ""
        if written.twice:
            shown = ", ".join(written.twice[:5]) + (", ..." if len(written.twice) > 5 else "")
            say(f"{written.out}: {len(written.twice)} entries skipped: {TWICE} ({shown})")
        say(f"{written.out}: {written.records} records ({ends or 'none new'}){already}")
        if written.fidelity:
            say("  replayed calls: " + ", ".join(f"{k} {v}" for k, v in sorted(written.fidelity.items())))
        done.append((item.provenance, written))
    return done
