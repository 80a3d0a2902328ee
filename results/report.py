"""The report: every statistic of a frame, beside the published numbers, in one structure.

`build_report(df, contrasts, by)` returns a typed `Report` (`results.report_model`; its JSON dump
is the `json` format, documented below); `render_report` turns it into text in any format.
Structure (schema "repair-harness.report/1"):

- meta: run_dirs, episodes, harness_errors, partial_lines, group_by (columns besides
  condition), contrasts ("A-B" list), contrast_source (asked | planned | none), n_boot, seed, alpha,
  protocols (what the records' environments played, e.g. plan or veriharness; [] if unrecorded)
- cells: one object per condition x group with the columns of `results.stats.cell`, plus
  paper: {solved, n, rate, calls, calls_per_game, inside_ci, note}; solved etc. are null and
  note says why when there is no published cell (e.g. "different model, no published reference")
- contrasts: rows of `results.contrasts.contrasts` plus paper_diff (derived from the primary
  table, null when not applicable) and paper_inside_ci
- unpaired: episodes of a contrast's arms with no usable partner (status ok|missing|harness_error)
- failures: final failure code counts of unsolved episodes per cell
- headline: per group with raw and allowed_json, our gain (points, CI) and tokens-per-success
  ratio beside the Self-Reflective APIs figures, which come from a different setting
- references: the sources of every published number
- imports: per model and suite of an import (results.imports; left out of the JSON for other
  runs): entries in its files, replayed, skipped by cause, harness errors, faithful / diverged /
  unverified / fidelity_unknown replays, the bfcl-eval release replayed on, and, where a score
  file came with it, verdicts, agree and disagree_ids against the published verdicts
- gaps: the planned grid cells (from the runs' specs and a folder's plan.json; results.grid)
  without full results: status not run | harness errors only | partial, with episodes and
  expected; meta.planned_cells counts the grid. A contrast whose group has no pair is left out
  of contrasts (no test on nothing) and named in meta.contrasts_without_pairs
Floats are rounded to 6 decimals, NaN is null, keys are sorted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from results import grid, imports, paper, tables
from results.columns import C
from results.contrasts import contrasts as run_contrasts
from results.contrasts import parse_contrasts
from results.dynamics import COLUMNS as DYNAMICS_COLUMNS
from results.dynamics import dynamics
from results.errors import UnknownChoice
from results.factors import FACTOR_FIELDS, factor_effects
from results.first_page import render_first_page
from results.forks import fork_rows
from results.heap import gives_back
from results.protocols import force_quits_won, protocols
from results.report_model import SCHEMA, Report
from results.resampling import N_BOOT, SEED
from results.served import notes as served_notes
from results.spellings import merge_spellings, other_names
from results.spellings import settings as condition_settings
from results.stats import ALPHA, failure_taxonomy, group_columns, summary

FORMATS = ("table", "md", "csv", "latex", "json")


def _clean(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return None if math.isnan(value) else _rounded(float(value))
    if value is None or value is pd.NA:
        return None
    return value


def _rounded(value: float) -> float:
    """Six decimals, or six significant digits where six decimals would leave none: a p-value of
    3e-9 stays 3e-09 in the JSON, never 0.0."""
    if value == 0 or abs(value) >= 1e-4:
        return round(value, 6)
    return float(f"{value:.6g}")


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [_clean(r) for r in frame.to_dict(orient="records")]


SETTING_COLUMNS = (C.model, C.suite, C.budget, C.condition, C.sample_seed, C.constrain)


def _names_in(contrast: str | tuple[str, str]) -> list[str]:
    """Every name a contrast may hold: each side of each '-' of "A-B,C-D" (a name may hold a '-'),
    or a pair's two names."""
    if not isinstance(contrast, str):
        return list(contrast)
    items = [item.strip() for item in contrast.split(",")]
    return [side for item in items for i, ch in enumerate(item) if ch == "-" for side in (item[:i], item[i + 1 :])]


@gives_back
def _settings(df: pd.DataFrame) -> pd.DataFrame:
    """The distinct settings of a frame: all `_setting` looks at, in a few rows instead of one per episode."""
    return df[list(SETTING_COLUMNS)].drop_duplicates()


def _setting(df: pd.DataFrame, row: dict[str, Any]) -> dict[str, Any]:
    """Suite, budget and sample seeds of a cell, for choosing its published reference."""
    rows = df
    for col in (C.model, C.suite, C.budget, C.condition):
        if col in row:
            rows = rows[rows[col] == row[col]]
    suites, budgets = rows[C.suite].unique(), rows[C.budget].unique()
    seeds = set(rows[C.sample_seed].tolist())
    return {
        "suite": suites[0] if len(suites) == 1 else "(mixed)",
        "budget": int(budgets[0]) if len(budgets) == 1 else -1,
        "sample_seed": next(iter(seeds & set(paper.SAMPLING_LANE_SEEDS)), None),
    }


def _paper_cell(df: pd.DataFrame, row: dict[str, Any]) -> dict[str, Any]:
    ref, note = paper.reference(row[C.model], row[C.condition], **_setting(df, row))
    if ref is None:
        return {
            "solved": None,
            "n": None,
            "rate": None,
            "calls": None,
            "calls_per_game": None,
            "inside_ci": None,
            "note": note,
        }
    if row["n"] != ref.n:
        note += f"; ours n={row['n']} of the paper's {ref.n} games"
    return {
        "solved": ref.solved,
        "n": ref.n,
        "rate": ref.rate,
        "calls": ref.calls,
        "calls_per_game": ref.calls_per_game,
        "note": note,
        "inside_ci": paper.inside(ref.rate, row["ci_low"], row["ci_high"]),
    }


def _paper_diff(df: pd.DataFrame, row: dict[str, Any]) -> float | None:
    a, b = (paper.reference(row[C.model], c, **_setting(df, {**row, "condition": c}))[0] for c in (row["a"], row["b"]))
    if a is None or b is None:
        return None
    return a.rate - b.rate


def _group_label(row: dict[str, Any], gcols: Sequence[str]) -> str:
    group = ", ".join(f"{c} {row[c]}" for c in gcols if c in row and c != C.condition)
    return f"{row['contrast']} ({group})" if group else row["contrast"]


@gives_back
def _headline(
    df: pd.DataFrame,
    by: Sequence[str] | None,
    cells: pd.DataFrame,
    seed: int,
    n_boot: int,
    done: pd.DataFrame | None = None,
) -> list[dict[str, Any]]:
    """`done`: the contrasts table already computed; its a-b rows are reused (each row depends on
    its own pairs and seed only, so they are the numbers a fresh run would give)."""
    sr = paper.SELF_REFLECTIVE
    a, b = sr["ours_structured"], sr["ours_plain"]
    if not {a, b} <= set(df[C.condition].unique()):
        return []
    if done is not None and not done.empty and (done["contrast"] == f"{a}-{b}").any():
        table = done[done["contrast"] == f"{a}-{b}"]
    else:
        table = run_contrasts(df, [(a, b)], by=by, n_boot=n_boot, seed=seed).table
    out = []
    gcols = [c for c in table.columns if c in group_columns(df, by)]
    for _, row in table.iterrows():
        group = {c: row[c] for c in gcols}
        tps = {}
        for cond in (a, b):
            sel = cells[cells[C.condition] == cond]
            for c, v in group.items():
                sel = sel[sel[c] == v]
            tps[cond] = float(sel["tokens_per_success"].iloc[0]) if len(sel) else math.nan
        ratio = tps[b] / tps[a] if tps[a] and not math.isnan(tps[a]) else math.nan
        lo, hi = sr["completion_gain_points"]
        ci = (100 * row["ci_low"], 100 * row["ci_high"])
        out.append(
            {
                **group,
                "contrast": f"{a}-{b}",
                "gain_points": 100 * row["diff"],
                "gain_ci_low_points": ci[0],
                "gain_ci_high_points": ci[1],
                "tokens_per_success_ratio": ratio,
                "theirs_gain_points": list(sr["completion_gain_points"]),
                "theirs_tokens_per_success_ratio": list(sr["tokens_per_success_ratio"]),
                "gain_ci_overlaps_theirs": None if math.isnan(ci[0]) else bool(ci[0] <= hi and lo <= ci[1]),
                "ratio_inside_theirs": None
                if math.isnan(ratio)
                else paper.inside(ratio, *sr["tokens_per_success_ratio"]),
                "note": "different setting: " + sr["setting"],
            }
        )
    return out


# every column the report reads, besides the grouping ones (see results.stats.cell, failure_taxonomy)
REPORT_FIELDS = (
    *SETTING_COLUMNS,
    C.task_id,
    C.fork,
    C.repaired_next,
    C.progressed,
    C.fork_of,
    C.fork_segment,
    C.calls_to_repair,
    C.prefix_calls,
    C.segment_solved,
    C.success,
    "run_dir",
    C.model_calls,
    C.prompt_tokens,
    C.completion_tokens,
    C.prompt_words,
    C.first_call_valid,
    C.repaired,
    C.limit_hit,
    C.fenced_answers,
    C.final_failure,
    C.usage_missing,
)


def report_columns(by: Sequence[str] | None = None, factors: bool = False) -> list[str]:
    """The columns `build_report` reads for `by`: `load(dirs, columns=report_columns(by))` gives a
    frame whose report is the full frame's, without holding every other field of every record."""
    # the compositions are read for the factors and to show two spellings of one as one condition
    # an import's provenance and replay counters (results.imports): small, and absent from other runs
    fields = [
        *REPORT_FIELDS,
        *DYNAMICS_COLUMNS,
        "extra.protocol",
        "extra.force_quit_won",
        *imports.COLUMNS,
        *(by or ()),
        *FACTOR_FIELDS,
    ]
    return list(dict.fromkeys(fields))


def _slim(df: pd.DataFrame, gcols: Sequence[str]) -> pd.DataFrame:
    """The columns the report reads: every selection and group below then carries a dozen columns,
    not every recorded field (the call logs, the config...)."""
    keep = [c for c in df.columns if c in REPORT_FIELDS or c in gcols or c in DYNAMICS_COLUMNS]
    slim = df[keep]
    # the attrs (run_dirs, ...) are read from the loaded frame; pandas deep-copies a frame's attrs
    # into every frame derived from it, some thousand times over a report
    slim.attrs = {}
    return slim


def build_report(
    df: pd.DataFrame,
    contrasts: str | Sequence[str] | Sequence[tuple[str, str]] | None = None,
    by: Sequence[str] | None = None,
    n_boot: int = N_BOOT,
    seed: int = SEED,
    planned: Sequence[grid.PlannedRun] = (),
    factors: bool = False,
    imported: Sequence[imports.ImportedRun] = (),
) -> Report:
    """Everything the report shows, typed; `Report.to_json()` is the documented JSON.
    `planned`: the runs' planned grids (`results.grid.plans`), for the gaps section; `factors`:
    each feedback part's paired effect (`results.factors`), a section of its own; `imported`: the
    imports among the runs (`results.imports.found`, those without records included), for the
    imports section."""
    written, (df, merged) = df, merge_spellings(df)
    present = set(df[C.condition].unique())
    if contrasts is None:
        pairs = [p for p in paper.PLANNED_CONTRASTS if set(p) <= present]
        source = "planned" if pairs else "none"
    else:
        items = (
            [contrasts]
            if isinstance(contrasts, str)
            else [c if isinstance(c, str) else f"{c[0]}-{c[1]}" for c in contrasts]
        )
        # any name of a condition shown answers (results.spellings): a spelling merged, an alias, a composition
        typed = [n for item in items for n in _names_in(item)]
        also = {**other_names(condition_settings(df), typed), **merged}
        pairs = parse_contrasts(",".join(items), present, also) if items else []
        source = "asked" if items else "none"
    gcols = group_columns(df, by)
    effects = factor_effects(df, n_boot, seed) if factors else None
    full, df = df, _slim(df, gcols)
    cells = summary(df, by)
    settings = _settings(df)
    cell_rows = _records(cells)
    for row in cell_rows:
        row["paper"] = _clean(_paper_cell(settings, row))
    result = run_contrasts(df, pairs, by=by, n_boot=n_boot, seed=seed) if pairs else None
    contrast_rows = _records(result.table) if result else []
    without_pairs = [_group_label(r, gcols) for r in contrast_rows if not r["n_pairs"]]
    contrast_rows = [r for r in contrast_rows if r["n_pairs"]]
    for row in contrast_rows:
        diff = _paper_diff(settings, row)
        row["paper_diff"] = _clean(diff)
        row["paper_inside_ci"] = (
            None if diff is None or row["ci_low"] is None else paper.inside(diff, row["ci_low"], row["ci_high"])
        )
    errors = int(df[C.success].isna().sum())
    run_dirs = list(full.attrs.get("run_dirs", sorted(df["run_dir"].unique()) if "run_dir" in df else []))
    run_dirs += [r.run_dir for r in imported if r.run_dir not in run_dirs]  # an import of no record
    served = served_notes(run_dirs)
    gap_rows = grid.gaps(written, planned)  # the planned grid names conditions as written
    sharded = grid.shards(planned)
    if sharded is not None:
        sharded["cells_missing"] = grid.missing_cells(planned, gap_rows)
    return Report.model_validate(
        _clean(
            {
                "schema": SCHEMA,
                "meta": {
                    "run_dirs": run_dirs,
                    "episodes": len(df),
                    "harness_errors": errors,
                    "partial_lines": int(full.attrs.get("partial_lines", 0)),
                    "group_by": gcols,
                    "contrasts": [f"{a}-{b}" for a, b in pairs],
                    "contrast_source": source,
                    "n_boot": n_boot,
                    "seed": seed,
                    "alpha": ALPHA,
                    "protocols": protocols(full),
                    "suites": sorted(df[C.suite].unique()),
                    "budgets": sorted(int(b) for b in df[C.budget].unique()),
                    "planned_cells": grid.planned_cells(planned),
                    "contrasts_without_pairs": without_pairs,
                    "merged_spellings": merged or None,
                    "concurrency": served.get("concurrency"),
                    "nondeterministic": served.get("nondeterministic"),
                    "shards": sharded,
                    "force_quits_won": force_quits_won(full),
                },
                "gaps": gap_rows,
                "cells": cell_rows,
                "contrasts": contrast_rows,
                "unpaired": _records(result.unpaired) if result else [],
                "failures": _records(failure_taxonomy(df, by)),
                "dynamics": _clean(dynamics(df, by)),
                "factors": None
                if effects is None
                else {"rows": _records(effects.table), "untestable": effects.untestable},
                "headline": _headline(df, by, cells, seed, n_boot, result.table if result else None),
                "forks": fork_rows(df, n_boot, seed),
                "imports": imports.rows(full, imported),
                "references": {
                    "primary": paper.PRIMARY_SOURCE,
                    "planned_contrasts": [f"{a}-{b}" for a, b in paper.PLANNED_CONTRASTS],
                    "budget_lane": f"{paper.BUDGET_LANE.design}: {paper.BUDGET_LANE.note}",
                    "sampling_lane": f"{paper.SAMPLING_LANE.design}: {paper.SAMPLING_LANE.note}",
                    "self_reflective": paper.SELF_REFLECTIVE["source"],
                },
            }
        )
    )


def render_report(
    df: pd.DataFrame,
    contrasts: str | Sequence[str] | None = None,
    by: Sequence[str] | None = None,
    fmt: str = "table",
    width: int = 160,
    headline: bool = False,
    planned: Sequence[grid.PlannedRun] = (),
    factors: bool = False,
    imported: Sequence[imports.ImportedRun] = (),
    details: bool = True,
) -> str:
    """The report as text: table (rich, fitted to `width`), md, csv (sections), latex, or json (stable).

    The Self-Reflective APIs comparison (`headline`) is a different setting: every format shows it
    only when asked (json: an empty `headline` list otherwise). `details`: the table format's every
    section; without it, its first page (results.first_page: a screen per suite)."""
    if fmt not in FORMATS:
        raise UnknownChoice("format", fmt, list(FORMATS))
    report = build_report(df, contrasts=contrasts, by=by, planned=planned, factors=factors, imported=imported)
    if fmt == "json":
        return (report if headline else report.model_copy(update={"headline": []})).to_json()

    if fmt == "table" and not details:
        return render_first_page(report, width=width, headline=headline)
    return tables.RENDERERS[fmt](report, width=width, headline=headline)
