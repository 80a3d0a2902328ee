"""`--bfcl-version auto`: per result file, the bfcl-eval release whose questions, starting states and
backend texts reproduce the file's log.

A sample of each file's entries (spread over the file) is imported on candidate releases, each in
its own worker (or here, for the installed one), and counted: entries skipped (unknown, other
questions, another state), replayed calls answered with other text than the log's or refused where
BFCL ran them, harness errors. The fewest, in that order, wins; a release that reproduces the whole
sample ends the search. The candidates are the releases on the package index, the cached and the
installed one: first those of the file's own data series (`BFCL_v3_...` files: releases up to
2025.8.6.2), the ones already here first, then the rest spread over the series (newest, oldest, the
middles of the gaps: neighbouring releases mostly hold the same data), at most MAX_TRIED a file.
The index is read only once a file needs a candidate past its series' releases that are here (an
import on the release it was made with asks nothing of the network).
"""

from __future__ import annotations

import tempfile
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.imports import releases
from harness.imports.bfcl import NAME, files, model_of
from harness.imports.here import probe_here
from harness.imports.inputs import text_lines
from harness.imports.worker import spawn

SAMPLE = 8  # entries of a file probed on each candidate
MAX_TRIED = 6  # candidates probed per file at most


@dataclass
class Choice:
    files: dict[Path, str] = field(default_factory=dict)  # each result file's release
    scores: list[Path] = field(default_factory=list)  # the score files found beside them


def _spread(newest_first: list[str]) -> list[str]:
    """Newest, oldest, then the middle of each gap, so that the first few cover the whole range."""
    n = len(newest_first)
    order = [0, n - 1][: min(n, 2)]
    gaps = deque([(0, n - 1)])
    while gaps:
        lo, hi = gaps.popleft()
        if hi - lo >= 2:
            mid = (lo + hi) // 2
            order.append(mid)
            gaps.extend([(lo, mid), (mid, hi)])
    return [newest_first[i] for i in order]


def candidates(series: str, listed: list[str], here: list[str]) -> list[str]:
    """The releases to try for a file of data series `series`, in order (at most MAX_TRIED)."""
    pool = sorted(set(listed) | set(here), key=releases.key, reverse=True)
    own = [v for v in pool if releases.data_series(v) == series]
    near = [v for v in own if v in here] + _spread([v for v in own if v not in here])
    return (near + _spread([v for v in pool if v not in own]))[:MAX_TRIED]


def score(probe: dict[str, Any]) -> tuple[int, int, int, int]:
    """Fewer is better: skipped entries, diverging calls, harness errors; then more calls as logged."""
    diverged = probe.get("other_text", 0) + probe.get("rejected_here_not_there", 0)
    return probe["skipped"], diverged, probe["harness_error"], -probe.get("same_text", 0)


def _sample(path: Path, into: Path, model: str) -> Path:
    """Up to SAMPLE entries of the file, spread over it, as a file of the same name under `model/`.
    Read by the import's own reader: a FIFO, a device, a byte that is no UTF-8 are one line naming the
    file, and lines end at a newline only (an entry's text may hold U+2028, which `splitlines` cuts)."""
    lines = [line.rstrip("\n") for _, line in text_lines(path) if line.strip()]
    picked = sorted({round(i * (len(lines) - 1) / max(SAMPLE - 1, 1)) for i in range(SAMPLE)}) if lines else []
    target = into / model / path.name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("".join(lines[i] + "\n" for i in picked), encoding="utf-8")
    return target


def _probe(release: str, samples: list[dict[str, str]], out: Path, say: Callable[[str], None]) -> list[dict[str, Any]]:
    if release == releases.installed():
        return probe_here(samples, str(out))
    answers = spawn(releases.folder(release, say), {"do": "probe", "samples": samples, "out": str(out)}, say)
    return [a["probe"] for a in answers]


def choose(paths: list[Path], model: str | None, say: Callable[[str], None]) -> Choice:
    """Each result file's release; a line for each says which, on what evidence, of how many tried."""
    results, scores, _ = files(paths)
    installed = releases.installed()
    here = releases.cached() + ([installed] if installed else [])
    series = {f: _series(f) for f in results}
    # the releases of a file's own series that are here come first whatever the index lists: it is
    # read (a pip process, 0.4 cpu s) only once a file needs a candidate past them
    near = {f: candidates(series[f], [], [v for v in here if releases.data_series(v) == series[f]]) for f in results}
    order: dict[Path, list[str]] | None = None

    def listing() -> dict[Path, list[str]]:
        say(f"auto: reading bfcl-eval's releases from the package index (at most {releases.INDEX_TIMEOUT_S} s)")
        listed = releases.listed()
        if listed is None:
            say("auto: the package index cannot be read: only the cached and installed bfcl-eval releases are tried")
        out = {f: candidates(series[f], listed or [], here) for f in results}
        if not any(out.values()):
            raise releases.ReleaseUnavailable(
                "--bfcl-version auto: no bfcl-eval release to try (none cached or installed, no index)"
            )
        return out

    tried: dict[Path, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
    with tempfile.TemporaryDirectory(prefix="repair-harness-auto-") as tmp:
        samples = {f: _sample(f, Path(tmp) / "samples" / str(i), model or model_of(f)) for i, f in enumerate(results)}
        for round_ in range(MAX_TRIED):
            wanted: dict[str, list[Path]] = defaultdict(list)
            for f in results:
                done = any(score(probe)[:2] == (0, 0) for _, probe in tried[f])  # reproduced: no more
                if not done and round_ >= len(near[f]) and order is None:
                    order = listing()
                candidates_f = near[f] if order is None else order[f]
                if not done and round_ < len(candidates_f):
                    wanted[candidates_f[round_]].append(f)
            for release, fs in wanted.items():
                asked = [{"file": str(samples[f]), "model": model or model_of(f)} for f in fs]
                try:
                    found = _probe(release, asked, Path(tmp) / "out" / f"{round_}-{release}", say)
                except releases.ReleaseUnavailable as exc:
                    say(f"auto: {exc}")
                    continue
                for f, probe in zip(fs, found, strict=True):
                    tried[f].append((release, probe))
    choice = Choice(scores=scores)
    for f in results:
        if not tried[f]:
            raise releases.ReleaseUnavailable(f"--bfcl-version auto: {f}: no candidate release could be installed")
        release, best = min(tried[f], key=lambda t: score(t[1]))
        choice.files[f] = release
        names = ", ".join(r for r, _ in tried[f])
        say(f"auto: {f}: bfcl-eval {release} ({_evidence(best)}; {len(tried[f])} tried: {names})")
        if score(best)[:2] != (0, 0):
            say(
                f"auto: {f}: no release tried reproduces its sample; bfcl-eval {release} comes closest, and the "
                "import names each entry skipped and each call that departs from the log"
            )
    _one_release_a_run(choice, model)
    return choice


def _series(f: Path) -> str:
    """A result file's data series (`BFCL_v3`, `BFCL_v4`), from its name."""
    m = NAME.match(f.name)
    assert m is not None  # files() keeps only names that match
    return f"BFCL_{m.group(1)}"


def _one_release_a_run(choice: Choice, model: str | None) -> None:
    """Files that go to one run directory (one model, one category: a v3 and a v4 file of a model)
    must replay on one release: refused before anything is imported, never half imported."""
    runs: dict[tuple[str, str], dict[str, Path]] = defaultdict(dict)
    for f, release in choice.files.items():
        m = NAME.match(f.name)
        assert m is not None  # files() keeps only names that match
        runs[(model or model_of(f), m.group(2))].setdefault(release, f)
    for (name, category), by_release in sorted(runs.items()):
        if len(by_release) > 1:
            said = "; ".join(f"{f} on bfcl-eval {r}" for r, f in sorted(by_release.items()))
            raise releases.ReleaseUnavailable(
                f"--bfcl-version auto: model {name}'s {category} files reproduce on different releases ({said}), "
                "and one run directory holds one release's records: import them apart, each with an --out of its own"
            )


def _evidence(probe: dict[str, Any]) -> str:
    refused = probe.get("rejected_here_not_there", 0)
    return (
        f"of {probe['entries']} entries sampled {probe['skipped']} skipped; replayed calls: "
        f"{probe.get('same_text', 0)} as logged, {probe.get('other_text', 0)} with other text"
        + (f", {refused} refused here" if refused else "")
    )
