"""`power`'s page: the plan per comparison and the noise floor, as tables fitted to a width (or JSON)."""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd
from rich.console import Console

from results.columns import C, is_reference_agent
from results.formats import _pct
from results.planning import Goal
from results.terminal import fit

FORMATS = ("table", "json")

METHODS = (
    "the discordance grows with the effect, E|effect + e| for a normal e fitted to the pilot's; one pair per task: "
    "exact McNemar power, computed exactly over the discordant count (Connor 1987; Miettinen 1968); several per "
    "task (seeds, fork points): the task is the unit, a sign flip of per-task means planned by its large-sample "
    "power with the pilot's ICC as measured, the design effect 1 + (m - 1) ICC (Donner & Klar 2000), the task "
    "means' variance planned at its expectation given a pilot of k tasks, x (k - 1) / (k - 3), and the "
    "randomization test's uncentered null variance (Lehmann & Romano 2005, 15.2), no test below 2/2^k <= alpha "
    "tasks; Holm over a family of k planned at alpha / k, its first step (a lower bound on each test's power); "
    "simulated: studies drawn from the pilot's own tasks tilted to the effect, each tested by the report "
    "(a model that is not the formula's); benchmarks/calibration.py checks them against planted truth"
)


def _count(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{int(x):,}"


def _pts(x: Any, sign: bool = False) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    return f"{100 * x:+.1f}" if sign else f"{100 * x:.1f}"


def _share(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else _pct(float(x))


def _ratio(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.2f}"


def plan_frame(plan: pd.DataFrame, goal: Goal) -> pd.DataFrame:
    effect = f"{100 * goal.effect:g}"
    rows = []
    extra = [c for c in plan.columns if c in (C.budget, C.sample_seed, C.constrain)]
    for r in _records(plan):
        rows.append(
            {
                C.model: r[C.model],
                # the report's one test: a contrast per suite, a factor pooled over its suites as report --factors
                C.suite: r[C.suite] + (" (pooled, as report --factors)" if r["pooled"] else ""),
                **{c: r[c] for c in extra},
                "comparison": r["comparison"] + ("" if r["kind"] == "contrast" else " (factor)"),
                "unit": r["unit"],
                "tasks": _count(r["tasks"]),
                "pairs": _count(r["pairs"]),
                "pilot diff pts": _pts(r["pilot_diff"], sign=True),
                "A only / B only": f"{_share(r['a_only'])} / {_share(r['b_only'])}",
                "ICC": _ratio(r["icc"]),
                "alpha (Holm first step)": f"{goal.alpha / r['family']:.4g} (k={r['family']})",
                "MDE pts now": _pts(r["mde"]),
                f"needed for {effect} pts": _count(r["needed"]),
                "needed pairs": _count(r["needed_pairs"]),
                "per task at the pilot's tasks": _count(r["per_task_needed"]),
                "power there": _share(r["power_at_needed"]),
                **({f"simulated ({goal.studies} studies)": _share(r["simulated"])} if goal.studies else {}),
            }
        )
    return pd.DataFrame(rows)


def noise_frame(noise: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for r in _records(noise):
        rows.append(
            {
                C.model: r[C.model],
                "condition": r[C.condition],
                "suite": r[C.suite],
                "tasks": _count(r["tasks"]),
                "repeats": _count(r["repeats"]),
                "solved": _share(r["rate"]),
                "tasks that flip": _share(r["flip"]),
                "repeats disagree": _share(r["disagree"]),
                "run-to-run SD pts": _pts(r["spread"]),
                "unpaired threshold pts": _pts(r["unpaired"]),
                # the runs its SD rests on beside it: 5 runs and 20 make different thresholds of one SD
                "two runs' gap (tau2 #540) pts": _pts(r["repeat"])
                + ("" if r.get("runs") is None else f" ({_count(r['runs'])} runs)"),
                "paired threshold pts": _pts(r["paired"]),
                "pairing gain": _ratio(r["gain"]),
            }
        )
    return pd.DataFrame(rows)


NOISE_NOTE = (
    "unpaired: the gap between two single runs' rates Fisher's exact test calls real; two runs' gap: what "
    "repetition alone exceeds alpha of the time, t(runs - 1) sqrt2 x run-to-run SD, the SD from the runs "
    "(repeats) given, a small-sample quantile (a prediction interval, about normal rates); paired: the "
    "smallest difference the report's exact McNemar calls real over the same tasks paired, with the repeats' "
    "own disagreement as noise; pairing gain: unpaired / paired (squared: the tasks pairing saves)"
)


def render(
    plan: pd.DataFrame,
    noise: pd.DataFrame | None,
    goal: Goal,
    head: Sequence[str],
    width: int,
    fmt: str = "table",
) -> str:
    if fmt == "json":
        return json.dumps(
            {
                "goal": {"effect": goal.effect, "alpha": goal.alpha, "power": goal.power, "studies": goal.studies},
                "plan": _records(plan),
                "noise": None if noise is None else _records(noise),
                "methods": METHODS,
            },
            indent=2,
            default=lambda value: value.item(),  # numpy scalars
        )
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=False, color_system=None)

    def say(text: str) -> None:
        console.print(text, highlight=False, markup=False)

    for line in head:
        say(line)
    effect = f"needed for {100 * goal.effect:g} pts"
    simulated = f"simulated ({goal.studies} studies)"
    # at 80 columns the answer stays: the MDE, the size needed and its power (and the drawn studies')
    plan_keep = ["comparison", "unit", "MDE pts now", effect, "power there", simulated]
    plan_drop = ["ICC", "alpha (Holm first step)", "A only / B only", "pairs", "needed pairs", "pilot diff pts"]
    noise_keep = ["tasks that flip", "unpaired threshold pts", "paired threshold pts"]
    noise_drop = ["suite", "repeats disagree", "repeats", "solved", "run-to-run SD pts", "pairing gain"]
    sections = [("Power per comparison", plan_frame(plan, goal), METHODS, plan_keep, plan_drop)]
    if noise is not None and not noise.empty:
        title = "Noise floor (repeats of one grid: seeds, runs)"
        sections.append((title, noise_frame(noise), NOISE_NOTE, noise_keep, noise_drop))
    for title, frame, note, keep, drop in sections:
        # a table per model and suite (the report's blocks), the suite in its title
        blocks = sorted(frame.groupby([C.model, C.suite], sort=False), key=lambda b: is_reference_agent(str(b[0][0])))
        for keys, part in blocks:  # the models first, then the reference agents (the report's order)
            say("")
            say(f"{title} — {' — '.join(str(k) for k in keys)}")
            table, dropped = fit(console, part.drop(columns=[C.model, C.suite]), keep=keep, drop_order=drop)
            console.print(table)
            if dropped:
                say(f"(left out at {width} columns: {', '.join(dropped)}; --format json has every field)")
        say(f"  how: {note}")
    if noise is None:
        say("")
        say(
            "Noise floor: no task was played twice under one condition (run with --seeds 0..4, and a "
            "temperature above 0 for a model, or give several runs of one grid)"
        )
    return out.getvalue()


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    def plain(v: Any) -> Any:
        return None if v is None or (isinstance(v, float) and math.isnan(v)) else v

    return [{str(k): plain(v) for k, v in row.items()} for row in frame.to_dict("records")]
