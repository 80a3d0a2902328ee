"""`import bfcl --bfcl-version V|auto`: which bfcl-eval release each file is replayed on, and where.

A published result file was made by the release of its day: its questions, starting states and
backend texts are that release's (DESIGN.md: an import is what happened). The installed release is
played in this process (harness.imports.here); any other one in a worker of its own
(harness.imports.worker) on a cached copy (harness.imports.releases), which runs the whole import
of its files there and streams its lines here. `auto` probes samples of each file on candidate
releases first (harness.imports.auto). An import on a release the file's log does not match says
that `--bfcl-version auto` would help.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

from harness.imports import releases
from harness.imports.auto import choose
from harness.imports.here import play_here
from harness.imports.worker import spawn

AUTO = "auto"


def import_bfcl(
    paths: list[Path], out: Path, model: str | None, version: str | None, say: Callable[[str], None]
) -> None:
    """The import on the installed release (`version` None), on release `version`, or on each file's own."""
    if version != AUTO:
        _play_on(None if version is None else releases.checked(version), paths, out, model, False, say)
        return
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
    spawn(releases.folder(version, say), request, say)
