"""Figures from records, drawn on the Agg canvas (no display, no pyplot global state).

Each function takes the episode frame and returns a matplotlib Figure titled with what it shows
(suites, budgets, the N of its cells, model); a panel that would look empty says why in its title,
never over the data; a model whose episodes were all harness errors gets a "no data" panel, not
bars of 0; what a figure leaves out is said in a caption under it. `save_figures` writes all of
them as PNG and PDF.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from envs import study
from results import factors, panels, paper
from results.columns import C, is_reference_agent
from results.dynamics import dynamics
from results.errors import UnknownChoice
from results.spellings import merge_spellings
from results.stats import funnel, summary

FORMATS = ("png", "pdf")


def success_by_condition(df: pd.DataFrame) -> Figure:
    """Solved rate per condition with Wilson 95% CIs, one panel per model; diamonds = paper."""
    cells = summary(df)
    models = panels.models(df)
    fig, axes = panels.figure(len(models), width=panels.width_for(cells[C.condition].nunique()))
    extra = [c for c in cells.columns if c in (C.suite, C.budget)]
    for ax, model in zip(axes, models, strict=True):
        if panels.no_data(ax, model, df):
            continue
        part = cells[(cells[C.model] == model) & (cells["n"] > 0)]
        conds = panels.conditions(part)
        hues = sorted({panels.hue(r, extra) for _, r in part.iterrows()})
        width = 0.8 / len(hues)
        for h, hue in enumerate(hues):
            sel = part[[panels.hue(r, extra) == hue for _, r in part.iterrows()]].set_index(C.condition)
            x = np.array([conds.index(c) for c in sel.index]) + (h - (len(hues) - 1) / 2) * width
            err = np.vstack([sel["rate"] - sel["ci_low"], sel["ci_high"] - sel["rate"]])
            ax.bar(x, sel["rate"], width, yerr=err, capsize=3, label=hue or None)
        suites = df.loc[df[C.model] == model, C.suite].unique()
        budgets = sorted(df.loc[df[C.model] == model, C.budget].unique())
        budget = study.BUDGET if study.BUDGET in budgets else int(budgets[0])
        labelled = False
        for i, cond in enumerate(conds):
            ref, _ = paper.reference(model, cond, suite=suites[0] if len(suites) == 1 else "(mixed)", budget=budget)
            if ref is not None:
                ax.plot(i, ref.rate, "D", color="black", label=None if labelled else f"paper (budget {budget})")
                labelled = True
        panels.label_conditions(ax, range(len(conds)), conds)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("solved rate (95% Wilson CI)")
        panels.panel_title(ax, model, df)
        if panels.none_solved(df, model):
            panels.note(ax, "no successes: every bar is 0\n(the whiskers: Wilson 95% CIs)")
    panels.legend(fig)
    panels.title(fig, "Solved rate by condition", df, panels.left_out(cells, df))
    return fig


def success_vs_budget(df: pd.DataFrame) -> Figure:
    """Solved rate against the call budget, one line per condition, one panel per model."""
    cells = summary(df, by=[C.suite, C.budget])
    models = panels.models(df)
    fig, axes = panels.figure(len(models))
    for ax, model in zip(axes, models, strict=True):
        if panels.no_data(ax, model, df):
            continue
        part = cells[(cells[C.model] == model) & (cells["n"] > 0)]
        conds = panels.conditions(part)
        suites = sorted(part[C.suite].unique())
        lines = [(cond, suite) for suite in suites for cond in conds]
        budgets = np.sort(part[C.budget].unique())
        # the lines side by side around each budget: at one budget they would hide each other
        step = 0.6 * (np.diff(budgets).min() if len(budgets) > 1 else 1) / max(1, len(lines))
        for k, (cond, suite) in enumerate(lines):
            sel = part[(part[C.condition] == cond) & (part[C.suite] == suite)].sort_values(C.budget)
            if sel.empty:
                continue
            err = np.vstack([sel["rate"] - sel["ci_low"], sel["ci_high"] - sel["rate"]])
            # one line per suite: budgets of two suites are not one curve
            ax.errorbar(
                sel[C.budget] + (k - (len(lines) - 1) / 2) * step,
                sel["rate"],
                yerr=err,
                marker="os^Dv"[suites.index(suite) % 5],
                capsize=3,
                color=f"C{conds.index(cond) % 10}",
                label=cond if len(suites) == 1 else f"{cond} ({suite})",
            )
        panels.integer_ticks(ax, part[C.budget].unique())
        ax.set_xlabel("budget (model calls)")
        ax.set_ylabel("solved rate (95% Wilson CI)")
        ax.set_ylim(-0.05, 1.05)  # a point at 0 or 1 (with an interval of no width) off the axis's edge
        panels.panel_title(ax, model, df)
        if panels.none_solved(df, model):
            panels.note(ax, "no successes: every point is 0")
    one = (
        [f"one budget only ({df[C.budget].iloc[0]}): run --budget 2,4,6,8 for a curve"]
        if df[C.budget].nunique() == 1
        else []
    )
    panels.legend(fig)
    panels.title(fig, "Solved rate against the call budget", df, one + panels.left_out(cells, df))
    return fig


def tokens_vs_success(df: pd.DataFrame) -> Figure:
    """Tokens per success against solved rate: lower right is cheap and good. The reference
    agents use no tokens: they are left out (the caption says so)."""
    agents = sorted(m for m in df[C.model].unique() if is_reference_agent(m))
    players = df[~df[C.model].isin(agents)]
    # every player's model has a row (an all-error one too, with no tokens per success)
    points = summary(players).dropna(subset=["tokens_per_success"]) if not players.empty else players
    fig, (ax,) = panels.figure(1, width=5.5, height=4.2)
    markers = "osD^vP*X"
    for m, model in enumerate(sorted(points[C.model].unique())):
        part = points[points[C.model] == model]
        ax.scatter(part["rate"], part["tokens_per_success"], marker=markers[m % len(markers)], label=model)
        # conditions that land on the same point share one label, one name per line
        for (rate, tps), same in part.groupby(["rate", "tokens_per_success"], sort=False):
            ax.annotate(
                "\n".join(same[C.condition]),
                (rate, tps),
                fontsize=7,
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
            )
    ax.set_xlabel("solved rate")
    ax.set_ylabel("tokens per success (prompt + completion)")
    ax.set_xlim(-0.02, 1.1)
    if points.empty:
        panels.centre(
            ax,
            "no successes: tokens per success is undefined\n(see failure_codes for what went wrong)"
            if not players.empty
            else "no model here spent tokens\n(only reference agents)",
        )
        ax.set_yticks([])
    else:
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    unsolved = sorted(set(players[C.model]) - set(points[C.model]))
    caption = ([f"left out: {', '.join(agents)} (reference agents use no tokens)"] if agents else []) + (
        [f"no point: {', '.join(unsolved)} (no success with known token usage)"] if unsolved else []
    )
    panels.title(fig, "Tokens per success against solved rate (lower right: cheap and good)", df, caption)
    return fig


def repair_funnel(df: pd.DataFrame) -> Figure:
    """Share of episodes whose first call was valid, that were repaired, and that were solved."""
    cells = funnel(df)
    models = panels.models(df)
    fig, axes = panels.figure(len(models), width=panels.width_for(cells[C.condition].nunique()))
    stages = (C.first_call_valid, C.repaired, "solved")
    for ax, model in zip(axes, models, strict=True):
        if panels.no_data(ax, model, df):
            continue
        part = cells[cells[C.model] == model].groupby(C.condition, sort=False)[["n", *stages]].sum()
        conds = panels.conditions(part.reset_index())
        part = part.loc[conds]
        x = np.arange(len(conds))
        for s, stage in enumerate(stages):
            ax.bar(x + (s - 1) * 0.27, part[stage] / part["n"], 0.27, label=stage.replace("_", " "))
        panels.label_conditions(ax, x, conds)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("share of episodes")
        panels.panel_title(ax, model, df)
        if not part[list(stages)].to_numpy().any():
            panels.note(ax, "no valid first call, no repair,\nno success: every bar is 0")
    panels.legend(fig)
    errors = int(df[C.success].isna().sum())
    panels.title(
        fig,
        "Repair funnel: first call valid, repaired, solved",
        df,
        [f"shares of the scored episodes: {errors} harness-error episode{'s' * (errors != 1)} left out"]
        if errors
        else [],
    )
    return fig


def failure_codes(df: pd.DataFrame) -> Figure:
    """How each episode ended, per condition: solved, or the failure code of its final attempt."""
    ended = df[C.final_failure].fillna("other").astype(str).where(df[C.success].ne(True), "solved")
    ended = ended.where(df[C.success].notna(), "harness error")
    frame = df.assign(ended=ended)
    # one panel per model (rows) and suite (columns): failure codes belong to a suite's protocol
    models, suites = panels.models(frame), sorted(frame[C.suite].unique())
    fig = Figure(figsize=(4.6 * len(suites), 2.6 * len(models) + 0.8), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(len(models), len(suites), squeeze=False)
    codes = sorted(frame["ended"].unique(), key=lambda c: (c != "solved", c == "harness error", c))
    colors = {c: f"C{i}" for i, c in enumerate(codes)}
    for r, model in enumerate(models):
        for k, suite in enumerate(suites):
            ax = grid[r][k]
            part = frame[(frame[C.model] == model) & (frame[C.suite] == suite)]
            if part.empty:
                ax.set_axis_off()
                continue
            conds = panels.conditions(part)
            counts = part.groupby([C.condition, "ended"]).size().unstack(fill_value=0).reindex(conds, fill_value=0)
            left = np.zeros(len(conds))
            for code in codes:
                if code in counts and counts[code].any():
                    ax.barh(range(len(conds)), counts[code], left=left, color=colors[code], label=code)
                    left += counts[code].to_numpy()
            panels.label_conditions(ax, range(len(conds)), conds, axis="y")
            ax.invert_yaxis()
            ax.set_xlabel("episodes")
            panels.integer_ticks(ax)
            ax.set_title(
                f"{panels.who(model)}, {suite}\n({len(part)} episodes, {int(part[C.success].eq(True).sum())} solved)",
                fontsize=9,
            )
    panels.legend(fig)
    panels.title(fig, "How episodes ended: solved, or the final failure code", df)
    return fig


def repair_dynamics(df: pd.DataFrame) -> Figure:
    """Recovery@k after the first rejection (of the episodes with one) per condition and
    `--constrain` arm; last panel: each model's rejections, schema-preventable vs the rest."""
    models = panels.models(df)
    fig, axes = panels.figure(len(models) + 1)
    rows = pd.DataFrame(dynamics(df, by=[C.constrain]))
    # one colour and dash per condition and arm in every panel, so that the one legend reads for all
    curves = sorted({(r[C.condition], r[C.constrain]) for _, r in rows.iterrows()}) if not rows.empty else []
    for ax, model in zip(axes, models, strict=False):
        if panels.no_data(ax, model, df):
            continue
        mine = rows[rows[C.model] == model] if not rows.empty else rows
        # after the first rejection (an attempt of its own) at most budget - 1 attempts are left
        last_k = max(1, int(df.loc[df[C.model] == model, C.budget].max()) - 1)
        drawn = 0
        every_k: set[int] = set()
        same: dict[tuple[tuple[int, float], ...], list[str]] = {}  # curves by their points: which coincide
        for _, r in mine.iterrows():
            ks = [int(k) for k, v in r["recovery_at"].items() if v is not None and int(k) <= last_k]
            if not ks:
                continue
            every_k.update(ks)
            arm = "" if r[C.constrain] == "none" else f" [{r[C.constrain]}]"
            same.setdefault(tuple((k, float(r["recovery_at"][str(k)])) for k in ks), []).append(
                f"{r[C.condition]}{arm}"
            )
            i = curves.index((r[C.condition], r[C.constrain]))
            # dashes of their own, and markers the smaller the later the curve: curves that coincide
            # (a reference agent's) show as rings of their colours, none hidden under another
            ax.plot(
                ks,
                [r["recovery_at"][str(k)] for k in ks],
                marker="o",
                markersize=3 + 6 * (len(curves) - 1 - i) / max(1, len(curves) - 1),
                alpha=0.85,
                color=f"C{i % 10}",
                linestyle=("-", "--", ":", "-.")[i % 4],
                label=f"{r[C.condition]}{arm}",
            )
            drawn += 1
        ax.set_title(panels.who(model), fontsize=9)
        for points, drawn_as in same.items():
            names = list(dict.fromkeys(drawn_as))  # a condition's curve per suite: named once
            if len(names) > 1:  # drawn one over another: the panel says so, as a bar chart of zeros does
                values = {v for _, v in points}
                at = f"{values.pop():.0%} at every k" if len(values) == 1 else "the same at every k"
                text = f"{len(names)} conditions coincide ({at}): {', '.join(names)}"
                panels.note(ax, "\n".join(textwrap.wrap(text, 48, break_on_hyphens=False)))
        ax.set_xlabel("k (attempts after the first rejection)")
        ax.set_ylabel("recovery@k")
        ax.set_ylim(-0.05, 1.05)
        panels.integer_ticks(ax, every_k)
        if not drawn:
            ax.set_xticks([])  # no k was drawn: a scale of 0.2 steps would read as one
            panels.centre(ax, "no episode with a rejection:\nno recovery to draw")
    ax = axes[-1]
    totals = rows.groupby(C.model, sort=True)[["rejections", "schema_rejections"]].sum() if not rows.empty else None
    if totals is None or not totals["rejections"].sum():
        panels.centre(ax, "no rejection recorded")
    else:
        share = totals["schema_rejections"] / totals["rejections"].where(totals["rejections"] > 0)
        ax.bar(totals.index, share.fillna(0), label="schema-preventable", color="tab:green")
        ax.bar(
            totals.index,
            (1 - share).where(share.notna(), 0),
            bottom=share.fillna(0),
            label="domain, state, invented values",
            color="tab:gray",
        )
        for i, n in enumerate(totals["rejections"].to_numpy()):
            ax.text(i, 1.02, f"n={int(n)}", ha="center", fontsize=7)
        ax.set_ylim(0, 1.12)
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    ax.set_title("share of rejections (all arms)", fontsize=9)
    panels.title(fig, "Repair dynamics: recovery@k after the first rejection, and the preventable share", df)
    panels.legend(fig)
    return fig


def factor_effects(df: pd.DataFrame) -> Figure:
    """Each feedback part's (and the form's) pooled paired effect on the solved rate with its 95%
    CI (results.factors), one panel per model: a forest plot, a line at no effect."""
    table = factors.factor_effects(df).table
    models = sorted(table[C.model].unique()) if not table.empty else panels.models(df)
    fig, axes = panels.figure(
        len(models), width=4.6, height=max(2.6, 0.45 * table.groupby(C.model).size().max()) if not table.empty else 2.6
    )
    # one scale for every panel (points), at least +-10: effects of 0 are not drawn on +-0.04 axes
    ends = 100 * table[["ci_low", "ci_high", "diff"]].to_numpy(dtype=float) if not table.empty else np.zeros(1)
    reach = max(10.0, float(np.nanmax(np.abs(ends))) if np.isfinite(ends).any() else 10.0) * 1.1
    for ax, model in zip(axes, models, strict=True):
        rows = table[table[C.model] == model].iloc[::-1]
        if rows.empty:
            panels.centre(ax, "no two conditions here differ in one part alone")
            ax.set_title(panels.who(model), fontsize=9)
            continue
        y = np.arange(len(rows))
        diff = 100 * rows["diff"].to_numpy(dtype=float)
        low = diff - 100 * rows["ci_low"].to_numpy(dtype=float)
        high = 100 * rows["ci_high"].to_numpy(dtype=float) - diff
        ax.errorbar(diff, y, xerr=np.nan_to_num(np.vstack([low, high])), fmt="o", color="tab:blue", capsize=3)
        ax.axvline(0, color="gray", linewidth=0.8, linestyle="--")
        labels = [
            f + ("" if a == "without" else f" ({a} -> {b})")
            for f, a, b in zip(rows["factor"], rows["level_a"], rows["level_b"], strict=True)
        ]
        ax.set_yticks(y, labels, fontsize=8)
        ax.set_xlabel("effect on solved rate (points)", fontsize=8)
        ax.set_xlim(-reach, reach)
        ax.set_title(f"{panels.who(model)} ({int(rows['pairs'].max())} pairs at most)", fontsize=9)
        if not np.nan_to_num(np.abs(diff)).any() and not np.nan_to_num(low + high).any():
            panels.note(ax, "no effect: every pair solved alike")
        elif "test" in rows and (rows["test"] == "too_few_tasks").any():  # why a dot has no whisker
            panels.note(ax, f"no interval: {int(rows['tasks'].max())} tasks, too few for a clustered one")
    panels.title(fig, "Which part of the feedback does the work: paired effect, 95% CI over tasks", df)
    return fig


FIGURES: dict[str, Callable[[pd.DataFrame], Figure]] = {
    "success_by_condition": success_by_condition,
    "success_vs_budget": success_vs_budget,
    "tokens_per_success": tokens_vs_success,
    "repair_funnel": repair_funnel,
    "failure_codes": failure_codes,
    "repair_dynamics": repair_dynamics,
    "factor_effects": factor_effects,
}


def save_figures(
    df: pd.DataFrame,
    out_dir: str | Path,
    formats: Sequence[str] = FORMATS,
    progress: Callable[[str], None] | None = None,
) -> list[Path]:
    """Write every figure as <out_dir>/<name>.<fmt>; returns the paths written. `progress` hears
    which figure is being drawn (a figure takes seconds on a loaded machine)."""
    for fmt in formats:
        if fmt not in FORMATS:
            raise UnknownChoice("figure format", fmt, list(FORMATS))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    df, _ = merge_spellings(df)  # two names of one condition are one, as in the report
    written = []
    for i, (name, make) in enumerate(FIGURES.items(), 1):
        if progress is not None:
            progress(f"figure {i}/{len(FIGURES)}: {name}")
        fig = make(df)
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            part = path.with_name(path.name + ".part")
            try:  # written whole or not at all: a full disk leaves no half a figure
                part.unlink(missing_ok=True)  # a link left there is never written through
                fig.savefig(part, dpi=120, format=fmt)
                part.replace(path)
            finally:
                part.unlink(missing_ok=True)
            written.append(path)
    return written
