"""The figures' frame (issue 40): more than three players wrap into a grid of panels, not one strip
22 inches wide, and an axis that counts (k, a budget, episodes) ticks at whole numbers only, never
at k = 1.5. Records from the reference agents (no model) and arithmetic fixtures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from results import load, panels
from results.plots import FIGURES, failure_codes, repair_dynamics, save_figures, success_by_condition, success_vs_budget


@pytest.fixture(scope="module")
def four_agents(tmp_path_factory) -> Path:
    from harness.cli import app

    out = tmp_path_factory.mktemp("panels") / "bank"
    done = CliRunner().invoke(
        app,
        [
            "run",
            "--suite",
            "bank-disputes",
            "--model",
            "agent:gold,agent:reader,agent:random,agent:stubborn",
            "--conditions",
            "raw,allowed_json",
            "--tasks",
            "2",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    return out


def _places(axes) -> list[tuple[int, int]]:
    return [(ax.get_subplotspec().rowspan.start, ax.get_subplotspec().colspan.start) for ax in axes]


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7])
def test_beyond_three_panels_a_figure_is_a_grid_in_reading_order(n: int) -> None:
    fig, axes = panels.figure(n, width=4.0, height=3.0)
    assert len(axes) == n == len(fig.axes)  # the blank places of the last row hold no axes
    cols = min(n, panels.MAX_COLUMNS)
    assert _places(axes) == [(i // cols, i % cols) for i in range(n)]
    assert fig.get_figwidth() == pytest.approx(4.0 * cols)
    assert fig.get_figheight() == pytest.approx(3.0 * -(-n // cols))


def test_four_players_and_the_share_panel_wrap(four_agents: Path) -> None:
    df = load(four_agents)
    fig = success_by_condition(df)
    assert _places(fig.axes) == [(0, 0), (0, 1), (0, 2), (1, 0)]
    dynamics = repair_dynamics(df)  # a panel per player, then the share of rejections
    assert _places(dynamics.axes) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]
    assert dynamics.axes[-1].get_title() == "share of rejections (all arms)"
    assert max(f.get_figwidth() for f in (fig, dynamics)) <= 3 * 4.2 + 1e-9


def _whole(values) -> bool:
    return all(float(v).is_integer() for v in values)


def _ticks_in_view(ax, axis: str = "x") -> list[float]:
    ax.figure.canvas.draw()
    lo, hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
    ticks = ax.get_xticks() if axis == "x" else ax.get_yticks()
    return [t for t in ticks if min(lo, hi) <= t <= max(lo, hi)]


def test_recovery_at_k_ticks_at_whole_k(four_agents: Path) -> None:
    fig = repair_dynamics(load(four_agents))
    drawn = [ax for ax in fig.axes[:-1] if ax.lines]
    assert drawn  # the reader's and the stubborn agent's curves
    for ax in drawn:
        ticks = _ticks_in_view(ax)
        assert ticks and _whole(ticks), (ax.get_title(), ticks)
        ks = {float(x) for line in ax.lines for x in np.asarray(line.get_xdata())}
        assert ks <= set(ticks)  # every k drawn is labelled
    empty = [ax for ax in fig.axes[:-1] if not ax.lines]  # agent:gold: no rejection
    assert empty and all(not ax.get_xticks().size for ax in empty)


@pytest.mark.parametrize("budgets", [(4,), (2, 4, 6, 8), (3, 10)])
def test_budget_and_episode_axes_tick_at_whole_numbers(kit, tmp_path: Path, budgets) -> None:
    recs = [kit.make(t, c, t < b, budget=b) for b in budgets for c in ("raw", "allowed_json") for t in range(3)]
    df = load(kit.write(tmp_path / "b", recs))
    (ax,) = success_vs_budget(df).axes
    ticks = _ticks_in_view(ax)
    assert _whole(ticks) and set(budgets) <= set(ticks)
    for ax in failure_codes(df).axes:
        assert _whole(_ticks_in_view(ax)), ax.get_title()


def test_every_figure_of_a_one_task_grid(kit, tmp_path: Path) -> None:
    recs = [kit.make(0, "raw", False, calls=4), kit.make(0, "allowed_json", True, calls=2)]
    paths = save_figures(load(kit.write(tmp_path / "one", recs)), tmp_path / "f", formats=["png"])
    assert len(paths) == len(FIGURES)


def test_a_reference_agent_is_titled_as_one_and_coinciding_curves_are_named(four_agents: Path) -> None:
    fig = repair_dynamics(load(four_agents))
    titles = [ax.get_title() for ax in fig.axes[:-1]]
    assert titles and not any("model agent:" in t for t in titles)
    assert any(t.startswith("agent:stubborn (reference agent)") for t in titles)
    # the stubborn agent never recovers under either condition: two curves drawn as one, said
    stubborn = next(t for t in titles if t.startswith("agent:stubborn"))
    assert "2 conditions coincide (0% at every k): raw, allowed_json" in " ".join(stubborn.split())
    assert "reference agents (not models)" in " ".join(fig.get_suptitle().split())
