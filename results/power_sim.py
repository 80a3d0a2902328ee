"""Power checked, not trusted: studies drawn from a known model of pairs, each tested by the report."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from results.contrasts import paired_effect
from results.power import Design, between_at, psi_at
from results.resampling import N_BOOT


def simulate(
    design: Design,
    units: int,
    delta: float,
    alpha: float,
    studies: int = 1000,
    seed: int = 0,
    n_boot: int = N_BOOT,
    tick: Callable[[int, int], None] | None = None,
) -> float:
    """The share of `studies` drawn from the design's model of pairs at `units` that the report's
    own test (`paired_effect`) rejects at `alpha`. The model: one pair per task, cells with
    a_only - b_only = delta and a_only + b_only = psi; several per task (the pilot's pairs per
    task), each task's effect delta + sigma_b or delta - sigma_b, equally likely (mean delta,
    variance sigma_b^2, within +-psi), its pairs from that effect's cells. `tick(done, studies)`
    before the first study and after each: a caller's progress (each runs the report's test, `n_boot` draws)."""
    rng = np.random.default_rng(seed)
    psi = min(1.0, psi_at(design, delta))
    m = max(1, round(design.per_task)) if design.clustered else 1
    tasks = units
    rejected = 0
    if tick is not None:
        tick(0, studies)
    for i in range(studies):
        effect = np.full(tasks, delta)
        if design.clustered:
            effect = delta + math.sqrt(between_at(design, delta)) * rng.choice((-1.0, 1.0), tasks)
        a_only = np.repeat((psi + effect) / 2, m)
        b_only = np.repeat((psi - effect) / 2, m)
        u = rng.random(tasks * m)
        sa = u < a_only
        sb = (u >= a_only) & (u < a_only + b_only)
        clusters = np.repeat(np.arange(tasks), m)
        row, _, _, _ = paired_effect(sa, sb, clusters, n_boot, seed + i)
        rejected += bool(row["p_value"] <= alpha)  # type: ignore[operator]
        if tick is not None:
            tick(i + 1, studies)
    return rejected / studies
