"""What plays an import in this process, on the bfcl-eval it imports: the installed release in
`repair-harness import`, a cached one in its worker (harness.imports.worker). The import itself
(`play_here`) and `--bfcl-version auto`'s probe of sample files (`probe_here`).

Beside harness.imports.versions, which chooses where each file plays, and harness.imports.auto,
which chooses its release: both call these, and the worker calls them on its release, so none of
the three imports another back.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.printable import console as printable_console


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
