"""Where an imported episode's replay stopped answering as the model was shown (its
`extra.replay.divergence`, harness.imports.play): read by the repair dynamics, which count only what
the model saw, and by `fork`, which refuses points after it. Light: the runner imports it."""

from __future__ import annotations

from typing import Any

from results.columns import C


def shown_until(record: dict[str, Any]) -> int | None:
    """How many of an imported episode's answers were answered as the model was shown (None: all)."""
    extra = record.get(C.extra)
    replay = extra.get("replay") if isinstance(extra, dict) else None
    divergence = replay.get("divergence") if isinstance(replay, dict) else None
    answer = divergence.get("answer") if isinstance(divergence, dict) else None
    return answer if isinstance(answer, int) else None
