"""What a fork tells before it plays: its dry run, and `fork --check` of an import.

Beside harness.fork, which harness.episodes imports to plan a fork's grid: what reads the grid's
tasks (harness.episodes) to plan a fork without playing it lives here, so the two make no circle.

A check forks each failure under its own condition with its own player and expects the recorded
continuation again (harness.readers.fork_check; another player, `--model`, is refused by the
command: it would measure that player, not the source's reproduction). An import's player cannot play here; its
check is the rebuild of every fork point's prefix (the same calls, every outcome as recorded)
beside the import's own comparison of every replayed call with the file's log.
"""

from __future__ import annotations

import asyncio
from collections import Counter

from harness import shards
from harness.episodes import select_tasks
from harness.fork import Source, plan
from harness.fork_imports import imported
from harness.run_spec import RunSpec
from harness.spec import resolved


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


def dry_run_text(spec: RunSpec) -> str:
    """`fork --dry-run`: the fork points, the episodes and the refusals; nothing is written."""
    run = resolved(spec)
    planned, refused = asyncio.run(plan(run, select_tasks(run)))
    replayed = sum(p.replay.calls for p in planned)
    lines = [
        f"{len({p.key.fork for p in planned})} fork points, {len(planned)} episodes; "
        f"{replayed} replayed calls not paid for again"
    ]
    if spec.shard:  # this machine's share, as `run --shard` plays it
        index, count = shards.parse(spec.shard)
        mine = [p for p in planned if shards.shard_of(p.key, count) == index]
        lines.append(f"shard {index}/{count}: {len(mine)} of the {len(planned)} episodes")
        planned = mine
    for model, n in Counter(p.key.model for p in planned).most_common():
        pace = EMBEDDED_PACE.get(model)
        lines.append(
            f"  {model}: {n} episodes"
            + (
                ""
                if pace is None
                else f", about {n * pace / 60:.0f} min at {pace} s each, one at a time ({model}: "
                "measured on a 2-core machine, README)"
            )
        )
    lines += [f"{n} fork points refused: {reason}" for reason, n in refused.most_common()]
    return "\n".join(lines)


# seconds an episode of the embedded CPU model takes, played one at a time (README: two episodes
# measured on a 2-core machine took about 80 s each): what a fork's dry run tells of its time
EMBEDDED_PACE = {"local": 80}
