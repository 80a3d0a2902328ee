"""What `fork --check` may check, and its check of an import.

A check forks each failure under its own condition with its own player and expects the recorded
continuation again (harness.readers.fork_check; another player, `--model`, is refused by the
command: it would measure that player, not the source's reproduction). An import's player cannot play here; its
check is the rebuild of every fork point's prefix (the same calls, every outcome as recorded)
beside the import's own comparison of every replayed call with the file's log.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from harness.episodes import select_tasks
from harness.fork import Source, imported, plan
from harness.spec import resolved
from harness.types import RunSpec


def is_import_check(sources: list[Source], check: bool) -> bool:
    return check and any(imported(s) for s in sources)


def import_check_text(spec: RunSpec) -> str:
    """An import's check: each fork point's prefix rebuilt on the replay's backends, with no
    player, and the fidelity of the entries the points come from."""
    run = resolved(spec)
    planned, refused = asyncio.run(plan(run, select_tasks(run)))
    points = {p.key.fork: p for p in planned}
    fidelity: Counter[str] = Counter()
    for p in points.values():
        faithful = p.origin.get("faithful")
        fidelity["as logged" if faithful else "unverified (no log)" if faithful is None else "diverged"] += 1
    lines = [
        f"{len(points)} fork points of the import rebuilt: every replayed call's outcome as recorded, the failed "
        "call's included; their entries' calls, against the file's log: "
        + ", ".join(f"{n} {what}" for what, n in fidelity.most_common())
    ]
    lines += [f"{n} fork points refused: {reason}" for reason, n in refused.most_common()]
    return "\n".join(lines)
