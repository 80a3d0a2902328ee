"""The calibration's model (benchmarks/calibration.py): the planted truth of a design, the pool of
records the real loop played for each task's outcome under each condition, and a replicate study
drawn from them."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.special import expit

from harness.run_spec import RunSpec
from harness.runner import play
from results.load import load

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = str(ROOT / "benchmarks" / "calibration_plugin.py")
ARMS = ("planted_a", "planted_b")
NODES, WEIGHTS = np.polynomial.hermite_e.hermegauss(48)
WEIGHTS = WEIGHTS / WEIGHTS.sum()


@dataclass(frozen=True)
class Truth:
    seeds: int
    base: float
    task_sd: float
    inter_sd: float
    coupling: float
    pilot: int  # the pilot's tasks
    null: int  # a null study's tasks

    def beta(self, effect: float) -> float:
        """The condition effect (logit) whose mean difference over tasks is `effect`."""
        u = self.base + self.task_sd * NODES[:, None]
        v = self.inter_sd * NODES[None, :]
        w = WEIGHTS[:, None] * WEIGHTS[None, :]

        def diff(b: float) -> float:
            return float((w * (expit(u + (b + v) / 2) - expit(u - (b + v) / 2))).sum())

        return float(brentq(lambda b: diff(b) - effect, -60, 60, xtol=1e-10))


DESIGNS = {
    "clustered, high ICC": Truth(seeds=8, base=0.0, task_sd=3.0, inter_sd=2.0, coupling=0.9, pilot=24, null=40),
    "clustered, low ICC": Truth(seeds=8, base=0.0, task_sd=0.5, inter_sd=0.4, coupling=0.0, pilot=24, null=40),
    "paired (1 seed)": Truth(seeds=1, base=0.0, task_sd=1.5, inter_sd=1.0, coupling=0.7, pilot=100, null=150),
}


class Pool:
    """Each task's record under each condition and outcome, played once by the real loop."""

    def __init__(self, tasks: int, root: Path):
        frames = []
        for intent in ("fail", "solve"):
            os.environ["REPAIR_PLANTED_INTENT"] = intent
            out = root / intent
            spec = RunSpec(
                suite="bank-disputes",
                tasks=tasks,
                models=["agent:planted"],
                conditions=list(ARMS),
                sample_seeds=[0],
                env_options={"n_tasks": tasks},
                plugins=[PLUGIN],
                out=str(out),
            )
            play(spec)
            frames.append(load(out))
        del os.environ["REPAIR_PLANTED_INTENT"]
        df = pd.concat(frames, ignore_index=True)
        df = df.assign(run_dir="planted", run_id="planted")
        ids = sorted(df["task_id"].unique())
        order = {t: i for i, t in enumerate(ids)}
        self.tasks = len(ids)
        self.ids = np.array(ids)
        self.frame = df
        self.success = df["success"].astype(bool).to_numpy()
        # index[task, arm, solved]: the row of that outcome
        self.index = np.full((self.tasks, 2, 2), -1)
        for i, row in enumerate(df[["task_id", "condition", "success"]].itertuples(index=False)):
            self.index[order[row.task_id], ARMS.index(row.condition), int(bool(row.success))] = i
        assert (self.index >= 0).all(), "a task's outcome was not played"

    def study(self, truth: Truth, effect: float, tasks: int, rng: np.random.Generator, seeds: int = 0) -> Study:
        """A replicate study: `tasks` tasks drawn from the truth at `effect`, `seeds` (the truth's) each."""
        seeds = seeds or truth.seeds
        if tasks > self.tasks:
            raise ValueError(f"a study of {tasks} tasks; the pool has {self.tasks} (--pool)")
        b = truth.beta(effect)
        u = rng.normal(truth.base, truth.task_sd, tasks)
        half = (b + rng.normal(0, truth.inter_sd, tasks)) / 2
        p = np.stack([expit(u + half), expit(u - half)], axis=1)  # [task, arm]
        shared = rng.random((tasks, seeds)) < truth.coupling
        draw = rng.random((tasks, seeds, 2))
        draw[shared] = draw[shared][:, :1]
        t, s, a = np.meshgrid(np.arange(tasks), np.arange(seeds), np.arange(2), indexing="ij")
        rows = self.index[t, a, (draw < p[:, None, :]).astype(int)]
        return Study(self, rows)


@dataclass
class Study:
    """rows[task, seed, arm]: the pool's record each episode of the study is."""

    pool: Pool
    rows: np.ndarray

    def frame(self) -> pd.DataFrame:
        """The study's records, as `load` reads a run of them."""
        seeds = np.broadcast_to(np.arange(self.rows.shape[1])[None, :, None], self.rows.shape)
        return self.pool.frame.iloc[self.rows.ravel()].assign(sample_seed=seeds.ravel()).reset_index(drop=True)

    def solved(self) -> np.ndarray:
        return self.pool.success[self.rows]

    def pairs(self) -> pd.DataFrame:
        """What `results.contrasts.pair` makes of the records: one row per (task, seed)."""
        ok = self.solved()
        tasks = np.broadcast_to(np.arange(ok.shape[0])[:, None], ok.shape[:2])
        return pd.DataFrame(
            {
                "suite": "bank-disputes",
                "task_id": self.pool.ids[tasks.ravel()],
                "success_a": ok[:, :, 0].ravel(),
                "success_b": ok[:, :, 1].ravel(),
            }
        )
