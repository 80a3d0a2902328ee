"""The frame every figure shares: panels per model, titles that say what a figure shows and leaves
out, notes above the axes, and a "no data" panel for a model whose episodes were all harness errors."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from results.columns import C, is_reference_agent
from results.stats import condition_rank, summary

# panels per row: beyond it a figure wraps into a grid (five players in one strip were 22 inches wide)
MAX_COLUMNS = 3


def figure(panels: int, width: float = 4.2, height: float = 3.6) -> tuple[Figure, list[Axes]]:
    """A figure of `panels` panels of width x height inches: one row of up to MAX_COLUMNS, beyond
    that a grid filled row by row, the unused places of its last row left blank. The axes come
    back in reading order, exactly `panels` of them."""
    n = max(1, panels)
    cols = min(n, MAX_COLUMNS)
    rows = -(-n // cols)
    fig = Figure(figsize=(cols * width, rows * height), layout="constrained")
    FigureCanvasAgg(fig)
    grid = fig.subplots(rows, cols, squeeze=False).ravel()
    for spare in grid[n:]:
        fig.delaxes(spare)
    return fig, list(grid[:n])


def integer_ticks(ax: Axes, values: Iterable[Any] = (), axis: str = "x") -> None:
    """Ticks at whole numbers on an axis that counts (k, a budget): at each value drawn where there
    are few, else wherever matplotlib puts them, never at 1.5."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    shown = sorted({int(v) for v in values})
    if 0 < len(shown) <= 12:
        (ax.set_xticks if axis == "x" else ax.set_yticks)(shown)
    else:
        target.set_major_locator(MaxNLocator(integer=True))


# a condition label longer than this wraps at its composition's "+" (and before its "@FORM")
LABEL_CHARS = 16


def condition_label(name: str, wrap: bool = False) -> str:
    """A condition as an axis label: a composition (`retry+code+location+allowed@json`) wraps at
    its parts, a line at most LABEL_CHARS long where the parts allow, so that eight of them side
    by side stay legible. `wrap`: a short one too, before its "@FORM" (beside wrapped labels, one
    left on one line is as wide as two of theirs and overlaps its neighbours)."""
    if len(name) <= LABEL_CHARS and not (wrap and "@" in name):
        return name
    head, at, form = name.rpartition("@")
    parts = (head if at else name).split("+")
    lines = [parts[0]]
    for part in parts[1:]:
        if len(lines[-1]) + 1 + len(part) <= LABEL_CHARS:
            lines[-1] += "+" + part
        else:
            lines.append("+" + part)
    if at:
        lines.append("@" + form)
    return "\n".join(lines)


def label_conditions(ax: Axes, positions: Iterable[float], names: Sequence[str], axis: str = "x") -> None:
    """Condition names as tick labels: short ones slanted, compositions wrapped and upright; on a
    y axis (bars drawn across) each on one line, as there is room to the left and none between."""
    wrapped = any(len(n) > LABEL_CHARS for n in names)
    if axis == "y":
        ax.set_yticks(list(positions), list(names), fontsize=7 if wrapped else None)
        return
    labels = [condition_label(n, wrap=wrapped) for n in names]
    if wrapped:
        ax.set_xticks(list(positions), labels, fontsize=7)
    else:
        ax.set_xticks(list(positions), labels, rotation=30, ha="right")


def width_for(conditions: int) -> float:
    """A panel's width in inches for this many conditions side by side (wrapped labels need ~0.8)."""
    return max(4.2, 0.8 * conditions + 1.0)


def conditions(frame: pd.DataFrame) -> list[str]:
    return sorted(frame[C.condition].unique(), key=condition_rank)


def hue(row: pd.Series, cols: Sequence[str]) -> str:
    return ", ".join(f"{c}={row[c]}" for c in cols)


def setting(df: pd.DataFrame) -> str:
    """Suite(s), budget(s) and size of what a figure shows, for its title. N counts the scored
    episodes of one bar or point: a cell of condition x model (x suite, budget where they vary)."""
    suites = ", ".join(sorted(df[C.suite].unique()))
    budgets = ", ".join(str(b) for b in sorted(df[C.budget].unique()))
    n = summary(df)["n"]
    n = n[n > 0] if (n > 0).any() else n
    size = f"N={n.min()} per cell" if n.nunique() == 1 else f"N={n.min()}..{n.max()} per cell"
    players = sorted(df[C.model].unique())
    models = [m for m in players if not is_reference_agent(m)]
    agents = [m for m in players if is_reference_agent(m)]
    who = [f"model{'s' if len(models) > 1 else ''} {', '.join(models)}"] if models else []
    who += [f"reference agent{'s' if len(agents) > 1 else ''} (not models) {', '.join(agents)}"] if agents else []
    return f"{' · '.join(who)} · {suites} · budget {budgets} · {size}"


def who(model: str) -> str:
    """A panel's player: a model, or a reference agent (a ceiling or a floor, never called a model)."""
    return f"{model} (reference agent)" if is_reference_agent(model) else f"model {model}"


def title(fig: Figure, what: str, df: pd.DataFrame, left_out: Sequence[str] = ()) -> None:
    """The figure's title: what it shows, its setting, then what it leaves out, each on as many
    lines as the figure's width needs. What it leaves out goes here, not under the panels: that
    space is the legend's (matplotlib lays out one of the two there)."""
    room = int(fig.get_figwidth() * 11)  # characters per line at fontsize 10
    lines, line = [], ""
    for part in setting(df).split(" · "):
        if line and len(line) + 3 + len(part) > room:
            lines.append(line)
            line = part
        else:
            line = f"{line} · {part}" if line else part
    notes = [w for text in left_out for w in textwrap.wrap(text, room, break_on_hyphens=False)]
    heading = textwrap.wrap(what, room, break_on_hyphens=False)
    fig.suptitle("\n".join([*heading, *lines, line, *notes]), fontsize=10)


def panel_title(ax: Axes, model: str, df: pd.DataFrame) -> None:
    rows = df[df[C.model] == model]
    ax.set_title(
        f"{who(model)} ({len(rows)} episodes, {int(rows[C.success].eq(True).sum())} solved)",
        fontsize=9,
    )


def note(ax: Axes, text: str) -> None:
    """What a reader should know about a panel, under its title: never over the bars and whiskers."""
    ax.set_title(f"{ax.get_title()}\n{text}", fontsize=9)


def centre(ax: Axes, text: str) -> None:
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


def legend(fig: Figure) -> None:
    """One legend for all panels, under them: a legend inside a panel covers its bars."""
    seen: dict[str, Artist] = {}
    for ax in fig.axes:
        for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
            seen.setdefault(label, handle)
    if seen:
        # as many columns as the figure's width holds at 7-point type (about 0.06 inch a character)
        longest = max(len(label) for label in seen) + 4
        fits = max(1, int(fig.get_figwidth() / (0.06 * longest)))
        fig.legend(
            list(seen.values()),
            list(seen),
            loc="outside lower center",
            ncols=min(4, len(seen), fits),
            fontsize=7,
            frameon=False,
        )


def models(df: pd.DataFrame) -> list[str]:
    return sorted(df[C.model].unique())


def no_data(ax: Axes, model: str, df: pd.DataFrame) -> bool:
    """A model with no scored episode (every one a harness error): its panel says so and draws nothing."""
    rows = df[df[C.model] == model]
    if rows[C.success].notna().any():
        return False
    ax.set_title(f"{who(model)} ({len(rows)} episodes)", fontsize=9)
    centre(ax, f"no data (harness errors):\nall {len(rows)} episodes failed in the harness")
    ax.set_xticks([])
    ax.set_yticks([])
    return True


def left_out(cells: pd.DataFrame, df: pd.DataFrame) -> list[str]:
    """The cells a figure of `cells` draws no bar for: only harness errors in them."""
    empty = cells[(cells["n"] == 0) & cells[C.model].isin(df.loc[df[C.success].notna(), C.model].unique())]
    if empty.empty:
        return []
    return [
        "no bar (harness errors only): "
        + ", ".join(sorted({f"{r[C.model]} {r[C.condition]}" for _, r in empty.iterrows()}))
    ]


def none_solved(df: pd.DataFrame, model: str) -> bool:
    return not df.loc[df[C.model] == model, C.success].eq(True).any()
