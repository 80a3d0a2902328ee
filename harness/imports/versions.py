"""`import bfcl --bfcl-version V|auto`: which bfcl-eval release each file is replayed on, and where.

A published result file was made by the release of its day: its questions, starting states and
backend texts are that release's (DESIGN.md: an import is what happened). The installed release is
played in this process; any other one in a worker of its own (harness.imports.worker) on a cached
copy (harness.imports.releases), which runs the whole import of its files and streams its lines
here. `auto` probes samples of each file on candidate releases first (harness.imports.auto). An
import on a release the file's log does not match says that `--bfcl-version auto` would help.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.imports import releases
from harness.imports.worker import spawn
from harness.printable import console as printable_console

AUTO = "auto"


def import_bfcl(
    paths: list[Path], out: Path, model: str | None, version: str | None, say: Callable[[str], None]
) -> None:
    """The import on the installed release (`version` None), on release `version`, or on each file's own."""
    if version != AUTO:
        _play_on(None if version is None else releases.checked(version), paths, out, model, False, say)
        return
    # a cycle: auto probes with probe_here, below
    from harness.imports.auto import choose

    chosen = choose(paths, model, say)
    on: dict[str, list[Path]] = defaultdict(list)
    for path, release in chosen.files.items():
        on[release].append(path)
    for release, files in sorted(on.items(), key=lambda item: releases.key(item[0])):
        # one release for all: the paths as given (the lines on files of other categories stay)
        _play_on(release, paths if len(on) == 1 else files + chosen.scores, out, model, True, say)


def _play_on(
    version: str | None, paths: list[Path], out: Path, model: str | None, auto: bool, say: Callable[[str], None]
) -> None:
    if version is None or version == releases.installed():
        play_here([str(p) for p in paths], str(out), model, auto, say)
        return
    request = {"do": "import", "files": [str(p) for p in paths], "out": str(out), "model": model, "auto": auto}
    spawn(releases.folder(version), request, say)


def play_here(paths: list[str], out: str, model: str | None, auto: bool, say: Callable[[str], None]) -> None:
    """The import in this process, on the bfcl-eval it imports (the installed one, or a worker's)."""
    # the episode loop and BFCL's modules: imported where the import plays
    from envs.bfcl import data
    from harness.imports.bfcl import OTHER_QUESTIONS, OTHER_STATE
    from harness.imports.run import play_files

    done = play_files("bfcl", [Path(p) for p in paths], Path(out), model, say)
    if auto:
        return
    skipped = sum(
        n for prov, _ in done for why, n in prov["skipped"].items() if why.startswith((OTHER_QUESTIONS, OTHER_STATE))
    )
    other = sum(written.fidelity["other_text"] for _, written in done)
    if skipped or other:
        say(
            f"on bfcl-eval {data.version()}, {skipped} entries were skipped for other questions or another "
            f"state and {other} replayed calls got other text than the file logged: `--bfcl-version auto` "
            "replays each file on the release that reproduces its log"
        )


def probe_here(samples: list[dict[str, str]], out: str) -> list[dict[str, Any]]:
    """Each sample file imported into its own folder under `out`: what its entries met on this
    release (entries skipped, replayed calls with the same text and with other text, errors)."""
    # the episode loop and BFCL's modules: imported where the probe plays
    from envs.bfcl import data
    from harness.imports.bfcl import batches
    from harness.imports.play import Batch, write

    found = []
    for i, sample in enumerate(samples):
        counts: dict[str, Any] = {"release": data.version(), "entries": 0, "skipped": 0, "harness_error": 0}
        for item in batches([Path(sample["file"])], Path(out) / str(i), sample["model"]):
            if isinstance(item, Batch):
                counts["skipped"] += sum(item.provenance["skipped"].values())
                counts["entries"] += sum(item.provenance["skipped"].values()) + len(item.episodes)
                written = write(item, printable_console(stderr=True))
                counts["harness_error"] += written.ends["harness_error"]
                for name, n in written.fidelity.items():
                    counts[name] = counts.get(name, 0) + n
        found.append(counts)
    return found
