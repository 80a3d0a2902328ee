"""Figures are written as real PNG and PDF files, with the data they claim to show."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.collections import LineCollection
from matplotlib.patches import Rectangle

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
    heights = [bar.get_height() for bar in ax.patches if isinstance(bar, Rectangle)]
    assert heights == pytest.approx([0.4, 0.4, 0.8, 0.9])
    # the error bar of allowed_json spans its Wilson interval
    segments = [c for c in ax.collections if isinstance(c, LineCollection)][0].get_segments()
    ys = sorted((float(lo), float(hi)) for lo, hi in (np.asarray(s)[:, 1] for s in segments))
    assert any(lo == pytest.approx(wilson(9, 10)[0]) and hi == pytest.approx(wilson(9, 10)[1]) for lo, hi in ys)
    diamonds = [line for line in ax.lines if line.get_marker() == "D"]
    tops = sorted(float(np.asarray(d.get_ydata())[0]) for d in diamonds)
    assert tops == pytest.approx([14 / 50, 18 / 50, 35 / 50, 36 / 50])


def test_budget_figure_with_several_budgets(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, "raw", t < b, budget=b) for b in (2, 4, 6, 8) for t in range(8)]
    paths = save_figures(load(kit.write(tmp_path / "b", recs)), tmp_path / "f", formats=["png"])
    assert len(paths) == len(FIGURES)
    with pytest.raises(UsageError, match="unknown figure format 'gif'"):
        save_figures(load(kit.write(tmp_path / "c", recs)), tmp_path / "g", formats=["gif"])


def test_titles_say_what_and_an_unsolved_run_says_so(kit, tmp_path: Path) -> None:
    recs = [
        kit.make(t, c, False, suite="bank-disputes", model="local") for c in ("raw", "allowed_json") for t in range(3)
    ]
    df = load(kit.write(tmp_path / "none", recs))
    for name, make in FIGURES.items():
        fig = make(df)
        title = fig.get_suptitle()
        assert "model local" in title and "bank-disputes" in title and "budget 4" in title and "N=3" in title, name
        texts = " ".join([t.get_text() for ax in fig.axes for t in ax.texts] + [ax.get_title() for ax in fig.axes])
        if name != "failure_codes":
            assert "no " in texts, name  # an explicit note, not empty axes


def test_failure_codes_count_how_each_episode_ended(kit, tmp_path: Path) -> None:
    recs = [
        kit.make(0, "raw", True),
        kit.make(1, "raw", False),
        kit.make(2, "raw", None),
        kit.make(0, "allowed_json", False),
        kit.make(1, "allowed_json", False),
        kit.make(2, "allowed_json", True),
    ]
    fig = FIGURES["failure_codes"](load(kit.write(tmp_path / "f", recs)))
    ax = fig.axes[0]
    by_label = {}
    for container in ax.containers:
        by_label[container.get_label()] = [bar.get_width() for bar in container]
    # rows: raw, allowed_json (the study's order)
    assert by_label == {"solved": [1, 1], "invalid_action": [1, 2], "harness error": [1, 0]}


def _texts(fig) -> str:
    return " ".join(
        [t.get_text() for ax in fig.axes for t in ax.texts] + [ax.get_title() for ax in fig.axes] + [fig.get_suptitle()]
    )


def _demo_like(kit, tmp_path: Path) -> Path:
    """The demo's shape: 2 tasks x 2 conditions x (a model, two reference agents, a model whose
    every episode was a harness error), on two suites (arithmetic fixtures, no model ran)."""
    recs = []
    for suite in ("bank-disputes", "paper-textworld"):
        for cond in ("raw", "allowed_json"):
            for t in range(2):
                recs.append(kit.make(t, cond, False, suite=suite, model="local", prompt_tokens=500))
                recs.append(
                    kit.make(
                        t, cond, True, suite=suite, model="agent:gold", prompt_tokens=0, completion_tokens=0, calls=1
                    )
                )
                recs.append(
                    kit.make(
                        t,
                        cond,
                        cond == "allowed_json",
                        suite=suite,
                        model="agent:reader",
                        prompt_tokens=0,
                        completion_tokens=0,
                        calls=2,
                    )
                )
                recs.append(kit.make(t, cond, None, suite=suite, model="vllm-down"))
    return kit.write(tmp_path / "demo", recs)


def test_titles_give_the_n_of_a_bar_not_of_a_condition_across_models(kit, tmp_path: Path) -> None:
    df = load(_demo_like(kit, tmp_path))
    for name, make in FIGURES.items():
        title = make(df).get_suptitle()
        assert "N=2 per cell" in title, (name, title)


def test_a_panel_of_harness_errors_only_says_no_data_never_0_solved(kit, tmp_path: Path) -> None:
    df = load(_demo_like(kit, tmp_path))
    for name in ("success_by_condition", "success_vs_budget", "repair_funnel"):
        fig = FIGURES[name](df)
        panel = next(ax for ax in fig.axes if "vllm-down" in ax.get_title())
        assert not panel.patches and not panel.lines, name  # nothing drawn
        assert "0 solved" not in panel.get_title()
        assert any("no data (harness errors)" in t.get_text() for t in panel.texts), name
        assert {m for m in ("local", "agent:gold", "agent:reader") if any(m in ax.get_title() for ax in fig.axes)} == {
            "local",
            "agent:gold",
            "agent:reader",
        }, name  # no model dropped without a word


def test_notes_sit_outside_the_data(kit, tmp_path: Path) -> None:
    """A note is part of the panel's title, above the axes: no text is drawn inside a panel with bars."""
    df = load(_demo_like(kit, tmp_path))
    for name in ("success_by_condition", "success_vs_budget", "repair_funnel"):
        fig = FIGURES[name](df)
        for ax in fig.axes:
            if ax.patches or ax.lines:
                assert not ax.texts, (name, ax.get_title(), [t.get_text() for t in ax.texts])
        local = next(ax for ax in fig.axes if "model local" in ax.get_title())
        assert "no successes" in local.get_title() or "every bar is 0" in local.get_title(), name


def test_tokens_figure_leaves_the_agents_out_and_says_so(kit, tmp_path: Path) -> None:
    fig = FIGURES["tokens_per_success"](load(_demo_like(kit, tmp_path)))
    (ax,) = fig.axes
    caption = " ".join(fig.get_suptitle().split())  # what it leaves out closes its title
    assert "agent:gold" in caption and "agent:reader" in caption and "use no tokens" in caption
    assert "local" in caption  # no success: no point, said
    labels = [t.get_text() for t in ax.texts if t.get_text()]
    assert all(label.count("\n") + 1 == len(set(label.split("\n"))) for label in labels)


def test_conditions_on_one_point_share_one_label(kit, tmp_path: Path) -> None:
    recs = [kit.make(t, c, True, model="local", calls=1) for c in ("raw", "loc_obs", "allowed_json") for t in range(2)]
    (ax,) = FIGURES["tokens_per_success"](load(kit.write(tmp_path / "same", recs))).axes
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["raw\nloc_obs\nallowed_json"]


def test_eight_compositions_label_the_axis_each_whole_and_wrapped_at_its_parts():
    from results.panels import LABEL_CHARS, condition_label

    names = [
        "raw",
        "retry+code+location+observed+allowed@json",
        "frame+retry+message@json",
        "retry+location+allowed=3@problem",
    ]
    labels = [condition_label(n) for n in names]
    assert labels[0] == "raw" and labels[1] == "retry+code\n+location\n+observed\n+allowed\n@json"
    assert all(label.replace("\n", "") == name for label, name in zip(labels, names, strict=True))
    assert all(len(line) <= LABEL_CHARS for label in labels for line in label.split("\n"))


@pytest.fixture(scope="module")
def fourteen(tmp_path_factory) -> Path:
    """14 compositions played by agent:reader and agent:random (no model): the grid whose figures
    showed the defects below."""
    from tests.harness.cli.invoke import invoke

    parts = [f"{loc}{o}{a}" for loc in ("", "+location") for o in ("", "+observed") for a in ("", "+allowed")]
    names = [f"retry+code{p}@{f}" for p in parts for f in ("prose", "json")][:14]
    out = tmp_path_factory.mktemp("fourteen") / "run"
    args = ["--conditions", ",".join(names), "--tasks", "2", "--out", out]
    result, text = invoke("run", "--suite", "bank-disputes", "--model", "agent:reader,agent:random", *args)
    assert result.exit_code == 0, text
    return out


def test_beside_wrapped_labels_a_short_composition_wraps_too_and_no_two_labels_overlap(fourteen: Path) -> None:
    fig = success_by_condition(load([fourteen]))
    fig.canvas.draw()
    ax = fig.axes[0]
    boxes = [t.get_window_extent() for t in ax.get_xticklabels()]
    assert "retry+code\n@json" in [t.get_text() for t in ax.get_xticklabels()]
    assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:], strict=False))


def test_coinciding_recovery_curves_each_show_and_a_point_at_0_sits_off_the_axis_edge(fourteen: Path) -> None:
    from results.plots import repair_dynamics, success_vs_budget

    df = load([fourteen])
    lines = [ln for ln in repair_dynamics(df).axes[0].get_lines() if ln.get_label() and ln.get_marker() == "o"]
    assert len(lines) == 14 and len({ln.get_markersize() for ln in lines}) == 14  # rings, none hidden
    assert success_vs_budget(df).axes[0].get_ylim()[0] < 0


def test_a_run_of_harness_errors_only_draws_every_figure_as_no_data(kit, tmp_path: Path) -> None:
    """Issue 57: `plot` on a run whose every episode is a harness error raised KeyError
    ('condition') in repair_funnel (a regression): every figure is drawn, saying no data."""
    recs = [kit.make(t, "raw", None, suite="bank-disputes", model="vllm-down") for t in range(3)]
    df = load(kit.write(tmp_path / "down", recs))
    for name, make in FIGURES.items():
        fig = make(df)
        assert fig.axes, name
