"""Importers: another harness's published transcripts as this project's records.

An importer is a registered kind (`IMPORTERS`, the one `Registry`), so a plugin can add a format
(tau2-bench simulations, inspect logs) beside the built-in `bfcl`. Its value is an `Importer`:
from the paths given, `batches` yields one `harness.imports.play.Batch` per run directory (a spec
and its recorded episodes) and lines of text that say what it left out; `play.write` replays each
through the one loop into its run directory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from envs.registry import Registry

if TYPE_CHECKING:
    from harness.imports.play import Batch


@dataclass(frozen=True)
class Importer:
    name: str
    description: str
    # (paths, the output folder, the model name given or None) -> batches, and lines to print
    batches: Callable[[list[Path], Path, str | None], Iterator[Batch | str]]


IMPORTERS: Registry[Importer] = Registry("importer")
# imported when named: listing the importers loads no format's code
IMPORTERS.register_lazy("bfcl", "harness.imports.bfcl:IMPORTER")
