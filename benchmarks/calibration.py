"""The report's and power's figures checked against planted truth (issue 64).

    .venv/bin/python benchmarks/calibration.py [--reps 200] [--big] [--seed 0] [--play N]

A plugin agent (benchmarks/calibration_plugin.py) solves each bank-disputes task under each of two
conditions (planted_a, planted_b) with a planted probability: task t's are expit(base + u_t + (beta +
v_t) / 2) under planted_a and expit(base + u_t - (beta + v_t) / 2) under planted_b, u_t ~ N(0, task_sd^2)
a task effect, v_t ~ N(0, inter_sd^2) a task x condition effect (so that at beta = 0 the two conditions
are alike: exchangeable, the null a sign flip and McNemar test); with probability `coupling` the two arms of a
(task, seed) share one uniform (their outcomes agree as far as their probabilities allow). beta is
solved (Gauss-Hermite quadrature) so that the mean difference over tasks, the study's estimand, is
the effect asked. A design is such a truth and a number of seeds per task (8: the task is the unit,
a sign flip; 1: one pair per task, McNemar).

Every episode is played by the real loop on the real environment: the agent's first call is
rejected by the contract, then it plays the gold call (solved by the suite's own check) or spends its
budget. Its outcome is the only random part of an episode, so each task's two outcomes under each
condition are played once (`repair-harness run` through harness.runner.play, 4 runs of --pool tasks)
and a replicate study is those records, each (task, seed, condition) the one its planted draw picks,
read by the project's own code: `results.report.build_report` (the report's p, interval, MDE, the
JSON's p_draws and p_se), `results.planning.plan` (`power`'s size and stated power) and
`results.noise.noise_floor`. `--play N` plays N studies whole through `run` instead (the agent draws
its own outcomes from a planted file) and prints their rates beside the planted ones: the two paths
are one model.

Per design it prints, with each figure's Monte Carlo standard error:
- power: a 24-task pilot (100 pairs one per task in the paired lane) planned by `power --effect 10`,
  then a study of the size stated, at the truth: stated power (mean) vs the share that reject;
- MDE: a null study's stated MDE (the report's line under a null), then a study of the same size at
  that effect: the share that reject (80% stated);
- type-I error: the null studies' share with p <= 0.05; coverage: the share of 95% intervals holding
  the truth, over the null, MDE and power studies;
- the noise floor: 8 (and 5) repeats of one grid give the two runs' gap; two new runs of it exceed
  it (5% stated).

The quick size ran in 643 s wall (170 s of CPU) on the shared 2-core machine on 2026-12-07; its figures
are in docs/power.md. Same seed, same figures.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.calibration_pool import ARMS, DESIGNS, PLUGIN, Pool, Study, Truth  # noqa: E402
from envs.contract import Decoding  # noqa: E402
from envs.tools.bank.disputes import BANK_DISPUTES  # noqa: E402
from harness.agents.base import task_seed  # noqa: E402
from harness.plugins import load as load_plugins  # noqa: E402
from harness.run_spec import RunSpec  # noqa: E402
from harness.runner import play  # noqa: E402
from results import planning  # noqa: E402
from results.contrasts import paired_effect  # noqa: E402
from results.load import load  # noqa: E402
from results.noise import noise_floor  # noqa: E402
from results.planning import Goal, plan  # noqa: E402
from results.power import POWER, design_of, mde  # noqa: E402
from results.report import build_report  # noqa: E402
from results.resampling import N_BOOT, SEED  # noqa: E402

ALPHA = 0.05


def fast_report(study: Study) -> dict[str, Any]:
    """The report's contrast row through the very functions `build_report` calls on it
    (results.contrasts.paired_effect, design_of, mde at Holm's first step of a family of one), from
    the study's outcomes: `reported` checks it equal to build_report on the first studies."""
    ok = study.solved()
    sa, sb = ok[:, :, 0].ravel(), ok[:, :, 1].ravel()
    clusters = np.repeat(np.arange(ok.shape[0]), ok.shape[1])
    row, _, _, _ = paired_effect(sa, sb, clusters, N_BOOT, SEED)
    design = design_of(sa, sb, clusters)
    tested = not math.isnan(float(row["p_value"]))  # type: ignore[arg-type]
    row["mde"] = mde(design, design.units, ALPHA, POWER) if tested else math.nan
    return row


CHECKED = 5  # studies per design whose fast rows are checked equal to build_report's and plan's


def _same(a: Any, b: Any, tol: float = 0.0) -> bool:
    missing = (a is None or pd.isna(a)) and (b is None or pd.isna(b))
    return bool(missing or a == b or (a is not None and b is not None and abs(a - b) <= tol))


def reported(study: Study, check: bool) -> dict[str, Any]:
    """The report's contrast planted_a - planted_b (its JSON row): `fast_report`, checked equal to
    `build_report` on the whole records where `check`."""
    fast = fast_report(study)
    if check:
        full = build_report(study.frame(), contrasts="planted_a-planted_b").contrasts[0].model_dump()
        for key in ("p_value", "ci_low", "ci_high", "mde", "p_draws", "p_se", "diff"):
            a, b = fast[key], full[key]
            if not _same(a, b, 5e-6):  # the report's JSON rounds to six significant digits
                raise AssertionError(f"{key}: fast {a} vs build_report {b}")
    return {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in fast.items()}


def planned(study: Study, goal: Goal, check: bool) -> dict[str, Any]:
    """`power`'s row (results.planning): `_row` on the study's pairs, checked equal to `plan` on its records."""
    fast = planning._row(study.pairs(), goal, 1, "planted_a-planted_b")
    if check:
        full = plan(study.frame(), [ARMS], goal).iloc[0]
        for key in ("needed", "power_at_needed", "mde", "icc"):
            a, b = fast[key], full[key]
            if not _same(a, b):
                raise AssertionError(f"{key}: fast {a} vs plan {b}")
    return fast


def share(hits: list[bool]) -> str:
    n = len(hits)
    if not n:
        return "—"
    p = sum(hits) / n
    return f"{100 * p:5.1f}% ± {100 * math.sqrt(max(p * (1 - p), 1e-9) / n):.1f} ({sum(hits)}/{n})"


def check_design(name: str, truth: Truth, pool: Pool, reps: int, effect: float, rng: np.random.Generator) -> dict:
    stated, rejected, needed, iccs, covered, skipped = [], [], [], [], [], 0
    for i in range(reps):
        pilot = pool.study(truth, effect, truth.pilot, rng)
        row = planned(pilot, Goal(effect=effect), i < CHECKED)
        if row["needed"] is None or pd.isna(row["needed"]) or int(row["needed"]) > pool.tasks:
            skipped += 1
            continue
        n = int(row["needed"])
        stated.append(float(row["power_at_needed"]))
        needed.append(n)
        iccs.append(float(row["icc"]) if pd.notna(row["icc"]) else math.nan)
        r = reported(pool.study(truth, effect, n, rng), i < CHECKED)
        rejected.append(r["p_value"] <= ALPHA)
        covered.append(r["ci_low"] <= effect <= r["ci_high"])
    null_rej, null_cov, mde_rej, mde_cov, mdes, mc = [], [], [], [], [], []
    for i in range(2 * reps):  # type-I error is read from twice as many null studies
        r = reported(pool.study(truth, 0.0, truth.null, rng), i < CHECKED)
        null_rej.append(r["p_value"] <= ALPHA)
        null_cov.append(r["ci_low"] <= 0 <= r["ci_high"])
        mc.append(r)
        if r["mde"] is None or i >= reps:
            continue
        mdes.append(r["mde"])
        alt = reported(pool.study(truth, r["mde"], truth.null, rng), i < CHECKED)
        mde_rej.append(alt["p_value"] <= ALPHA)
        mde_cov.append(alt["ci_low"] <= r["mde"] <= alt["ci_high"])
    print(f"\n{name}: {truth}")
    print(
        f"  power  pilot {truth.pilot} tasks, effect {100 * effect:g} pts: size stated median {np.median(needed):.0f}"
        + (f" (ICC median {np.median(iccs):.2f})" if truth.seeds > 1 else "")
        + f"; stated {100 * np.mean(stated):.1f}%, achieved {share(rejected)}"
        + (f"; {skipped} pilots planned past the pool" if skipped else "")
    )
    print(
        f"  MDE    null studies of {truth.null}: stated MDE median {100 * np.median(mdes):.1f} pts; "
        f"studies at it reject {share(mde_rej)} (80% stated)"
    )
    print(f"  type I {share(null_rej)} (<= 5%)")
    cover = covered + null_cov + mde_cov
    print(f"  95% CI coverage {share(cover)} (power {share(covered)}; null {share(null_cov)}; MDE {share(mde_cov)})")
    drawn = [r for r in mc if r.get("p_draws")]
    if drawn:
        more = sum(r["p_draws"] > 10_000 for r in drawn)
        print(f"  Monte Carlo p: {len(drawn)} of {len(mc)} null studies; {more} drew more than 10,000 (near alpha)")
    return {"cover": cover, "mc": drawn}


def check_noise(pool: Pool, reps: int, rng: np.random.Generator, repeats: int, tasks: int = 40) -> None:
    truth = DESIGNS["clustered, low ICC"]
    exceeded, gaps = [], []
    for _ in range(reps):
        df = pool.study(truth, 0.0, tasks, rng, seeds=repeats + 2).frame()
        df = df[df["condition"] == "planted_b"]
        known = df[df["sample_seed"] < repeats]
        row = noise_floor(known).iloc[0]
        fresh = df[df["sample_seed"] >= repeats].groupby("sample_seed")["success"].mean().to_numpy()
        gaps.append(float(row["repeat"]))
        exceeded.append(abs(fresh[0] - fresh[1]) > row["repeat"] + 1e-12)
    print(
        f"  noise floor, {repeats} repeats of {tasks} tasks: two runs' gap median {100 * np.median(gaps):.1f} pts, "
        f"exceeded by two new runs {share(exceeded)} (5% stated)"
    )


def task_key(i: int) -> str:
    """The plugin agent's key of bank-disputes task i: task_seed of its reference (envs.authoring)."""
    _, draft = BANK_DISPUTES.draw(BANK_DISPUTES.seed_base + i)
    calls = [c.model_copy(update={"id": c.id or f"call_{j}"}) for j, c in enumerate(draft.gold)]
    return str(task_seed(list(calls), None))


def check_play(studies: int, root: Path, rng: np.random.Generator, effect: float) -> None:
    """Studies played whole through `run`, the agent drawing its outcomes from a planted file: every
    outcome is the planted draw's, and the report and power read the run directory."""
    load_plugins([PLUGIN])
    module = "repair_harness_plugin_" + hashlib.sha256(str(Path(PLUGIN).resolve()).encode()).hexdigest()[:12]
    solves = sys.modules[module].solves
    truth, tasks = DESIGNS["clustered, high ICC"], 24
    keys = [task_key(i) for i in range(tasks)]
    for i in range(studies):
        u = rng.normal(truth.base, truth.task_sd, tasks)
        half = (truth.beta(effect) + rng.normal(0, truth.inter_sd, tasks)) / 2
        pa, pb = expit(u + half), expit(u - half)
        tasks_planted = {k: {"planted_a": a, "planted_b": b} for k, a, b in zip(keys, pa, pb, strict=True)}
        planted = {"tasks": tasks_planted, "coupling": truth.coupling, "salt": i}
        path = root / f"plant{i}.json"
        path.write_text(json.dumps(planted))
        os.environ["REPAIR_PLANTED"] = str(path)
        out = root / f"play{i}"
        spec = RunSpec(
            suite="bank-disputes",
            tasks=tasks,
            models=["agent:planted"],
            conditions=list(ARMS),
            sample_seeds=list(range(truth.seeds)),
            env_options={"n_tasks": tasks},
            plugins=[PLUGIN],
            out=str(out),
            decoding=Decoding(temperature=1.0),  # each seed its own draw, as a sampled model's
        )
        start = time.perf_counter()
        play(spec)
        took = time.perf_counter() - start
        df = load(out)
        expect = [
            solves(keys[int(str(t).rsplit("-", 1)[1])], c, int(s), planted)
            for t, c, s in df[["task_id", "condition", "sample_seed"]].itertuples(index=False)
        ]
        agree = int((df["success"].astype(bool).to_numpy() == np.array(expect)).sum())
        row = build_report(df, contrasts="planted_a-planted_b").contrasts[0].model_dump()
        need = plan(df, [ARMS], Goal(effect=effect)).iloc[0]
        print(
            f"  played study {i}: {len(df)} episodes through run in {took:.1f} s, {agree} of them the planted "
            f"draw's outcome; report diff {100 * row['diff']:+.1f} pts (planted {100 * (pa - pb).mean():+.1f}) "
            f"[{100 * row['ci_low']:+.1f}, {100 * row['ci_high']:+.1f}], p {row['p_value']:.4f} "
            f"({row['p_draws']:,} draws, se {row['p_se']:.4f}); power: {need['needed']} tasks for {100 * effect:g} pts"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--reps", type=int, default=300, help="replicate studies per check (default 300; the noise floor's 2x)"
    )
    ap.add_argument("--big", action="store_true", help="1,500 replicates per check (5x the time)")
    ap.add_argument("--pool", type=int, default=600, help="tasks played once per outcome (default 600)")
    ap.add_argument("--effect", type=float, default=0.10, help="the effect planned, a share (default 0.10)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--play", type=int, default=0, help="also play N studies whole through run")
    ap.add_argument("--only", default="", help="designs whose name holds this text (default: all)")
    args = ap.parse_args()
    reps = 1500 if args.big else args.reps
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        pool = Pool(args.pool, Path(tmp))
        print(
            f"pool: {pool.tasks} bank-disputes tasks x 2 conditions x 2 outcomes played in "
            f"{time.perf_counter() - start:.1f} s; {reps} replicates per check"
        )
        covers = []
        for name, truth in DESIGNS.items():
            if args.only and args.only not in name:
                continue
            out = check_design(name, truth, pool, reps, args.effect, rng)
            if truth.seeds > 1:
                covers += out["cover"]
            if out["mc"]:
                r = min(out["mc"], key=lambda r: abs(r["p_value"] - ALPHA))
                print(
                    "  a Monte Carlo p in the report's JSON: "
                    f'{{"p_value": {r["p_value"]:.6g}, "p_draws": {r["p_draws"]}, "p_se": {r["p_se"]:.3g}}}'
                )
        print(f"\nclustered 95% intervals, all designs: coverage {share(covers)}")
        print("noise floor (the low-ICC truth, planted_b, null):")
        for repeats in (8, 5):
            check_noise(pool, 2 * reps, rng, repeats)
        if args.play:
            print(
                f"\n{args.play} studies played whole (the high-ICC truth, 24 tasks x 8 seeds, effect {args.effect:g}):"
            )
            check_play(args.play, Path(tmp), rng, args.effect)
    print(f"\ntotal {time.perf_counter() - start:.0f} s")
    print("peers: none (BFCL and inspect_ai plan no study's power; the planted truth checks each figure)")


if __name__ == "__main__":
    main()
