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
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from envs import study
from results import paper
from results.columns import C, is_reference_agent
from results.dynamics import dynamics
from results.errors import UnknownChoice
from results.stats import condition_rank, funnel, summary

FORMATS = ("png", "pdf")


def _figure(ncols: int, width: float = 4.2, height: float = 3.6) -> tuple[Figure, list[Axes]]:
    fig = Figure(figsize=(max(1, ncols) * width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, max(1, ncols), squeeze=False)[0]
    return fig, list(axes)


def _conditions(frame: pd.DataFrame) -> list[str]:
    return sorted(frame[C.condition].unique(), key=condition_rank)


def _hue(row: pd.Series, cols: Sequence[str]) -> str:
    return ", ".join(f"{c}={row[c]}" for c in cols)


def _setting(df: pd.DataFrame) -> str:
    """Suite(s), budget(s) and size of what a figure shows, for its title. N counts the scored
    episodes of one bar or point: a cell of condition x model (x suite, budget where they vary)."""
    suites = ", ".join(sorted(df[C.suite].unique()))
    budgets = ", ".join(str(b) for b in sorted(df[C.budget].unique()))
    n = summary(df)["n"]
    n = n[n > 0] if (n > 0).any() else n
    size = f"N={n.min()} per cell" if n.nunique() == 1 else f"N={n.min()}..{n.max()} per cell"
    models = ", ".join(sorted(df[C.model].unique()))
    return f"model {models} · {suites} · budget {budgets} · {size}"


def _title(fig: Figure, what: str, df: pd.DataFrame, left_out: Sequence[str] = ()) -> None:
    """The figure's title: what it shows, its setting, then what it leaves out, each on as many
    lines as the figure's width needs. What it leaves out goes here, not under the panels: that
    space is the legend's (matplotlib lays out one of the two there)."""
    room = int(fig.get_figwidth() * 11)  # characters per line at fontsize 10
    lines, line = [], ""
    for part in _setting(df).split(" · "):
        if line and len(line) + 3 + len(part) > room:
            lines.append(line)
            line = part
        else:
            line = f"{line} · {part}" if line else part
    notes = [w for text in left_out for w in textwrap.wrap(text, room, break_on_hyphens=False)]
    fig.suptitle("\n".join([what, *lines, line, *notes]), fontsize=10)


def _panel_title(ax: Axes, model: str, df: pd.DataFrame) -> None:
    rows = df[df[C.model] == model]
    ax.set_title(
        f"model {model} ({len(rows)} episodes, {int(rows[C.success].eq(True).sum())} solved)",
        fontsize=9,
    )


def _note(ax: Axes, text: str) -> None:
    """What a reader should know about a panel, under its title: never over the bars and whiskers."""
    ax.set_title(f"{ax.get_title()}\n{text}", fontsize=9)


def _centre(ax: Axes, text: str) -> None:
    """A message in the middle of a panel that has no data to cover."""
    ax.text(
        0.5,
        0.5,
        text,
        transform=ax.transAxes,
        ha="center",
        va="center",
        fontsize=9,
        wrap=True,
        bbox={"boxstyle": "round", "facecolor": "lightyellow", "edgecolor": "0.6"},
    )


def _legend(fig: Figure) -> None:
    """One legend for all panels, under them: a legend inside a panel covers its bars."""
    seen: dict[str, Artist] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    if seen:
        fig.legend(
            list(seen.values()),
            list(seen),
            loc="outside lower center",
            ncols=min(4, len(seen)),
            fontsize=7,
            frameon=False,
        )


def _models(df: pd.DataFrame) -> list[str]:
    return sorted(df[C.model].unique())


def _no_data(ax: Axes, model: str, df: pd.DataFrame) -> bool:
    """A model with no scored episode (every one a harness error): its panel says so and draws nothing."""
    rows = df[df[C.model] == model]
    if rows[C.success].notna().any():
        return False
    ax.set_title(f"model {model} ({len(rows)} episodes)", fontsize=9)
    _centre(ax, f"no data (harness errors):\nall {len(rows)} episodes failed in the harness")
    ax.set_xticks([])
    ax.set_yticks([])
    return True


def _left_out(cells: pd.DataFrame, df: pd.DataFrame) -> list[str]:
    """The cells a figure of `cells` draws no bar for: only harness errors in them."""
    empty = cells[(cells["n"] == 0) & cells[C.model].isin(df.loc[df[C.success].notna(), C.model].unique())]
    if empty.empty:
        return []
    return [
        "no bar (harness errors only): "
        + ", ".join(sorted({f"{r[C.model]} {r[C.condition]}" for _, r in empty.iterrows()}))
    ]


def _none_solved(df: pd.DataFrame, model: str) -> bool:
    return not df.loc[df[C.model] == model, C.success].eq(True).any()


def success_by_condition(df: pd.DataFrame) -> Figure:
    """Solved rate per condition with Wilson 95% CIs, one panel per model; diamonds = paper."""
    cells = summary(df)
    models = _models(df)
    fig, axes = _figure(len(models))
    extra = [c for c in cells.columns if c in (C.suite, C.budget)]
    for ax, model in zip(axes, models, strict=True):
        if _no_data(ax, model, df):
            continue
        part = cells[(cells[C.model] == model) & (cells["n"] > 0)]
        conds = _conditions(part)
        hues = sorted({_hue(r, extra) for _, r in part.iterrows()})
        width = 0.8 / len(hues)
        for h, hue in enumerate(hues):
            sel = part[[_hue(r, extra) == hue for _, r in part.iterrows()]].set_index(C.condition)
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
        ax.set_xticks(range(len(conds)), conds, rotation=30, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("solved rate (95% Wilson CI)")
        _panel_title(ax, model, df)
        if _none_solved(df, model):
            _note(ax, "no successes: every bar is 0\n(the whiskers: Wilson 95% CIs)")
    _legend(fig)
    _title(fig, "Solved rate by condition", df, _left_out(cells, df))
    return fig


def success_vs_budget(df: pd.DataFrame) -> Figure:
    """Solved rate against the call budget, one line per condition, one panel per model."""
    cells = summary(df, by=[C.budget])
    models = _models(df)
    fig, axes = _figure(len(models))
    for ax, model in zip(axes, models, strict=True):
        if _no_data(ax, model, df):
            continue
        part = cells[(cells[C.model] == model) & (cells["n"] > 0)]
        conds = _conditions(part)
        budgets = np.sort(part[C.budget].unique())
        # the conditions side by side around each budget: at one budget they would hide each other
        step = 0.6 * (np.diff(budgets).min() if len(budgets) > 1 else 1) / max(1, len(conds))
        for k, cond in enumerate(conds):
            sel = part[part[C.condition] == cond].sort_values(C.budget)
            err = np.vstack([sel["rate"] - sel["ci_low"], sel["ci_high"] - sel["rate"]])
            ax.errorbar(
                sel[C.budget] + (k - (len(conds) - 1) / 2) * step,
                sel["rate"],
                yerr=err,
                marker="o",
                capsize=3,
                label=cond,
            )
        ax.set_xticks(sorted(part[C.budget].unique()))
        ax.set_xlabel("budget (model calls)")
        ax.set_ylabel("solved rate (95% Wilson CI)")
        ax.set_ylim(0, 1.05)
        _panel_title(ax, model, df)
        if _none_solved(df, model):
            _note(ax, "no successes: every point is 0")
    one = (
        [f"one budget only ({df[C.budget].iloc[0]}): run --budget 2,4,6,8 for a curve"]
        if df[C.budget].nunique() == 1
        else []
    )
    _legend(fig)
    _title(fig, "Solved rate against the call budget", df, one + _left_out(cells, df))
    return fig


def tokens_vs_success(df: pd.DataFrame) -> Figure:
    """Tokens per success against solved rate: lower right is cheap and good. The reference
    agents use no tokens: they are left out (the caption says so)."""
    agents = sorted(m for m in df[C.model].unique() if is_reference_agent(m))
    players = df[~df[C.model].isin(agents)]
    # every player's model has a row (an all-error one too, with no tokens per success)
    points = summary(players).dropna(subset=["tokens_per_success"]) if not players.empty else players
    fig, (ax,) = _figure(1, width=5.5, height=4.2)
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
        _centre(
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
    _title(fig, "Tokens per success against solved rate (lower right: cheap and good)", df, caption)
    return fig


def repair_funnel(df: pd.DataFrame) -> Figure:
    """Share of episodes whose first call was valid, that were repaired, and that were solved."""
    cells = funnel(df)
    models = _models(df)
    fig, axes = _figure(len(models))
    stages = (C.first_call_valid, C.repaired, "solved")
    for ax, model in zip(axes, models, strict=True):
        if _no_data(ax, model, df):
            continue
        part = cells[cells[C.model] == model].groupby(C.condition, sort=False)[["n", *stages]].sum()
        conds = _conditions(part.reset_index())
        part = part.loc[conds]
        x = np.arange(len(conds))
        for s, stage in enumerate(stages):
            ax.bar(x + (s - 1) * 0.27, part[stage] / part["n"], 0.27, label=stage.replace("_", " "))
        ax.set_xticks(x, conds, rotation=30, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("share of episodes")
        _panel_title(ax, model, df)
        if not part[list(stages)].to_numpy().any():
            _note(ax, "no valid first call, no repair,\nno success: every bar is 0")
    _legend(fig)
    errors = int(df[C.success].isna().sum())
    _title(
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
    models, suites = _models(frame), sorted(frame[C.suite].unique())
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
            conds = _conditions(part)
            counts = part.groupby([C.condition, "ended"]).size().unstack(fill_value=0).reindex(conds, fill_value=0)
            left = np.zeros(len(conds))
            for code in codes:
                if code in counts and counts[code].any():
                    ax.barh(range(len(conds)), counts[code], left=left, color=colors[code], label=code)
                    left += counts[code].to_numpy()
            ax.set_yticks(range(len(conds)), conds)
            ax.invert_yaxis()
            ax.set_xlabel("episodes")
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_title(
                f"model {model}, {suite}\n({len(part)} episodes, {int(part[C.success].eq(True).sum())} solved)",
                fontsize=9,
            )
    _legend(fig)
    _title(fig, "How episodes ended: solved, or the final failure code", df)
    return fig


def repair_dynamics(df: pd.DataFrame) -> Figure:
    """Recovery@k after the first rejection (of the episodes with one) per condition and
    `--constrain` arm; last panel: each model's rejections, schema-preventable vs the rest."""
    models = _models(df)
    fig, axes = _figure(len(models) + 1)
    rows = pd.DataFrame(dynamics(df, by=[C.constrain]))
    for ax, model in zip(axes, models, strict=False):
        if _no_data(ax, model, df):
            continue
        mine = rows[rows[C.model] == model] if not rows.empty else rows
        drawn = 0
        for _, r in mine.iterrows():
            ks = [int(k) for k, v in r["recovery_at"].items() if v is not None]
            if not ks:
                continue
            arm = "" if r[C.constrain] == "none" else f" [{r[C.constrain]}]"
            # dashes of their own: curves that coincide (a reference agent's) stay visible
            ax.plot(
                ks,
                [r["recovery_at"][str(k)] for k in ks],
                marker="o",
                markersize=3,
                alpha=0.85,
                linestyle=("-", "--", ":", "-.")[drawn % 4],
                label=f"{r[C.condition]}{arm}",
            )
            drawn += 1
        ax.set_title(f"model {model}", fontsize=9)
        ax.set_xlabel("k (attempts after the first rejection)")
        ax.set_ylabel("recovery@k")
        ax.set_ylim(-0.05, 1.05)
        if not drawn:
            _centre(ax, "no episode with a rejection:\nno recovery to draw")
    ax = axes[-1]
    totals = rows.groupby(C.model, sort=True)[["rejections", "schema_rejections"]].sum() if not rows.empty else None
    if totals is None or not totals["rejections"].sum():
        _centre(ax, "no rejection recorded")
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
    _title(fig, "Repair dynamics: recovery@k after the first rejection, and the preventable share", df)
    _legend(fig)
    return fig


FIGURES: dict[str, Callable[[pd.DataFrame], Figure]] = {
    "success_by_condition": success_by_condition,
    "success_vs_budget": success_vs_budget,
    "tokens_per_success": tokens_vs_success,
    "repair_funnel": repair_funnel,
    "failure_codes": failure_codes,
    "repair_dynamics": repair_dynamics,
}


def save_figures(df: pd.DataFrame, out_dir: str | Path, formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write every figure as <out_dir>/<name>.<fmt>; returns the paths written."""
    for fmt in formats:
        if fmt not in FORMATS:
            raise UnknownChoice("figure format", fmt, list(FORMATS))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, make in FIGURES.items():
        fig = make(df)
        for fmt in formats:
            path = out / f"{name}.{fmt}"
            fig.savefig(path, dpi=120)
            written.append(path)
    return written
