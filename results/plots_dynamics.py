"""The repair-dynamics figure (results.dynamics): recovery@k curves per condition and decoding
arm, one panel per model, and the preventable share of rejections as a stacked bar per model."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from results.columns import C
from results.dynamics import dynamics
from results.plots import _centre, _figure, _legend, _models, _no_data, _title


def repair_dynamics(df: pd.DataFrame) -> Figure:
    """Recovery@k after the first rejection (of the episodes with one) per condition and
    `--constrain` arm; last panel: each model's rejections, schema-preventable vs the rest."""
    models = _models(df)
    fig, axes = _figure(len(models) + 1)
    rows = pd.DataFrame(dynamics(df, by=[C.constrain]))
    for ax, model in zip(axes, models):
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
            ax.plot(ks, [r["recovery_at"][str(k)] for k in ks], marker="o", markersize=3, alpha=0.85,
                    linestyle=("-", "--", ":", "-.")[drawn % 4], label=f"{r[C.condition]}{arm}")
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
        ax.bar(totals.index, (1 - share).where(share.notna(), 0), bottom=share.fillna(0),
               label="domain, state, invented values", color="tab:gray")
        for i, (model, n) in enumerate(totals["rejections"].items()):
            ax.text(i, 1.02, f"n={int(n)}", ha="center", fontsize=7)
        ax.set_ylim(0, 1.12)
        ax.tick_params(axis="x", labelrotation=30, labelsize=7)
    ax.set_title("share of rejections (all arms)", fontsize=9)
    _title(fig, "Repair dynamics: recovery@k after the first rejection, and the preventable share", df)
    _legend(fig)
    return fig
