"""Figures are written as real PNG and PDF files, with the data they claim to show."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from results import UsageError, load, wilson
from results.plots import FIGURES, save_figures, success_by_condition


def test_all_figures_png_and_pdf(two_model_run: Path, tmp_path: Path) -> None:
    paths = save_figures(load(two_model_run), tmp_path / "figs")
    assert sorted(p.name for p in paths) == sorted(f"{n}.{e}" for n in FIGURES for e in ("png", "pdf"))
    for p in paths:
        head = p.read_bytes()[:8]
        assert head.startswith(b"\x89PNG") if p.suffix == ".png" else head.startswith(b"%PDF")


def test_success_bars_carry_rates_cis_and_paper(paper_run: Path) -> None:
    fig = success_by_condition(load(paper_run))
    ax = fig.axes[0]
    heights = [bar.get_height() for bar in ax.patches]
    assert heights == pytest.approx([0.4, 0.4, 0.8, 0.9])
    # the error bar of allowed_json spans its Wilson interval
    segments = [c for c in ax.collections if hasattr(c, "get_segments")][0].get_segments()
    ys = sorted(s[:, 1].tolist() for s in map(np.asarray, segments))
    assert any(lo == pytest.approx(wilson(9, 10)[0]) and hi == pytest.approx(wilson(9, 10)[1]) for lo, hi in ys)
    diamonds = [line for line in ax.lines if line.get_marker() == "D"]
    assert sorted(d.get_ydata()[0] for d in diamonds) == pytest.approx([14 / 50, 18 / 50, 35 / 50, 36 / 50])


def test_budget_figure_with_several_budgets(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, "raw", t < b, budget=b) for b in (2, 4, 6, 8) for t in range(8)]
    paths = save_figures(load(kit.write(tmp_path / "b", recs)), tmp_path / "f", formats=["png"])
    assert len(paths) == len(FIGURES)
    with pytest.raises(UsageError, match="unknown figure format 'gif'"):
        save_figures(load(kit.write(tmp_path / "c", recs)), tmp_path / "g", formats=["gif"])
