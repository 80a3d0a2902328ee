"""The artifact's statistics, as a named method (`artifact`), beside our own defaults.

The study's numbers came from its own analysis script (github jaideepray1989/veriharness @
929868ac, output/artifact/.../paper/agenticdev2026/analyze_modal_paper900.py). To compare with
its table, `reproduce paper` reports these exactly as it computed them; everywhere else our own
statistics (results.contrasts: Generator-seeded bootstrap, statsmodels' McNemar and Holm) stay
the default. The procedure, in our words:

- pairing: within a model (and budget, sample seed), by game, games in sorted task-id order
  (the seeded CI depends on the order);
- bootstrap CI: `random.Random(1)`, 10,000 resamples of n draws `values[rng.randrange(n)]`, the
  sorted means at indices int(0.025*9999) and int(0.975*9999); the same for the model-call deltas;
- exact two-sided McNemar on the discordant pairs; Holm step-down with a running maximum;
- primary lane: 4 planned contrasts per model, Holm over the 4; budget lane: raw vs allowed_json
  only, at budgets 2/4/6/8, Holm over the 4 budgets per model; sampling lane (the study ran it on
  Qwen only): raw, allowed_prose, allowed_json, 3 contrasts over game clusters (the mean delta
  over the sample seeds per game), the cluster bootstrap CI and a sign-flip test (100,000 flips,
  `random.Random(1)`), Holm over the 3;
- cost: the study's proxy is the whitespace words of the user prompt only; we also report the
  server's real token counts, labelled as such.

Our condition names are used throughout; the artifact's names are given beside them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Collection, Sequence
from typing import Any

import pandas as pd

from envs import study
from results.columns import C
from results.errors import UsageError
from results.scalars import as_int
from results.stats import valid_rows

METHOD = "artifact"
SOURCE = (
    "github.com/jaideepray1989/veriharness @ 929868ac9d29162a9083aaa5422c0f58a32f93b1, "
    "output/artifact/veriharness-agenticdev2026-anonymous/paper/agenticdev2026/analyze_modal_paper900.py"
)
DRAWS = 10_000
FLIPS = 100_000
SEED = 1
# the artifact's variant names for ours
VARIANTS = study.VARIANT_NAMES
# (baseline, treatment, the artifact's label); difference = treatment - baseline
PRIMARY_CONTRASTS = (
    ("raw", "allowed_prose", "structured_feedback"),
    ("raw", "allowed_json", "full_interface"),
    ("allowed_prose", "allowed_json", "typed_structure"),
    ("loc_obs", "allowed_json", "expected_alternatives"),
)
BUDGET_CONTRAST = ("raw", "allowed_json", "full_interface")
SAMPLING_CONTRASTS = PRIMARY_CONTRASTS[:3]
LANES = ("primary", C.budget, "sampling")
WORDS_LABEL = "paper proxy: whitespace words of the user prompts (system line excluded)"
TOKENS_LABEL = "real tokens: prompt + completion as the server counted them"


def bootstrap_ci(values: Sequence[float], draws: int = DRAWS, seed: int = SEED) -> tuple[float, float]:
    """The artifact's percentile CI of the mean: index quantiles of the sorted resample means."""
    if not values:
        return 0.0, 0.0
    rng = random.Random(seed)
    n = len(values)
    means = []
    for _ in range(draws):
        total: float = 0
        for _ in range(n):
            total += values[rng.randrange(n)]  # summed in draw order, as the artifact did
        means.append(total / n)
    means.sort()
    return means[int(0.025 * (draws - 1))], means[int(0.975 * (draws - 1))]


def mcnemar_exact(baseline_only: int, treatment_only: int) -> float:
    discordant = baseline_only + treatment_only
    if discordant == 0:
        return 1.0
    tail = sum(math.comb(discordant, k) for k in range(min(baseline_only, treatment_only) + 1))
    patterns: int = 2**discordant  # typeshed: int ** int is Any (a negative exponent gives a float)
    return min(1.0, 2 * (tail / patterns))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down: rank by p (ties keep their order), (m - rank) * p capped at 1, running max."""
    m = len(p_values)
    out = [0.0] * m
    running = 0.0
    for rank, index in enumerate(sorted(range(m), key=lambda i: p_values[i])):
        running = max(running, min(1.0, (m - rank) * float(p_values[index])))
        out[index] = running
    return out


def sign_flip_p(values: Sequence[float], draws: int = FLIPS, seed: int = SEED) -> float:
    """The artifact's cluster sign-flip test on the non-zero cluster deltas, (extreme + 1) / (draws + 1)."""
    nonzero = [v for v in values if v]
    if not nonzero:
        return 1.0
    rng = random.Random(seed)
    observed = abs(sum(nonzero) / len(nonzero))
    extreme = 0
    for _ in range(draws):
        total: float = 0
        for v in nonzero:
            total += v if rng.random() < 0.5 else -v
        extreme += abs(total / len(nonzero)) >= observed - 1e-12
    return (extreme + 1) / (draws + 1)


def paired_values(success: dict[str, tuple[bool, bool]], calls: dict[str, tuple[int, int]]) -> dict[str, Any]:
    """One contrast from per-game (baseline, treatment) outcomes and model calls, keyed by task id."""
    tasks = sorted(success)
    deltas = [float(success[t][1]) - float(success[t][0]) for t in tasks]
    call_deltas = [float(calls[t][1]) - float(calls[t][0]) for t in tasks]
    both = sum(1 for t in tasks if success[t][0] and success[t][1])
    t_only = sum(1 for t in tasks if success[t][1] and not success[t][0])
    b_only = sum(1 for t in tasks if success[t][0] and not success[t][1])
    lo, hi = bootstrap_ci(deltas)
    clo, chi = bootstrap_ci(call_deltas)
    n = len(tasks)
    return {
        "n": n,
        "baseline_success": both + b_only,
        "treatment_success": both + t_only,
        "delta": sum(deltas) / n if n else math.nan,
        "ci_low": lo,
        "ci_high": hi,
        "treatment_only": t_only,
        "baseline_only": b_only,
        "same_pass": both,
        "same_fail": n - both - t_only - b_only,
        "p": mcnemar_exact(b_only, t_only),
        "delta_calls": sum(call_deltas) / n if n else math.nan,
        "delta_calls_ci_low": clo,
        "delta_calls_ci_high": chi,
    }


def _arms(
    rows: pd.DataFrame, baseline: str, treatment: str
) -> tuple[dict[str, tuple[bool, bool]], dict[str, tuple[int, int]], int]:
    """Per task: (baseline, treatment) success and calls; games missing an arm or with a harness
    error in one are left out and counted (the artifact had none: it refused such data)."""
    ok = valid_rows(rows)
    arms = {c: ok[ok[C.condition] == c].set_index(C.task_id) for c in (baseline, treatment)}
    for c, frame in arms.items():
        if frame.index.duplicated().any():
            raise UsageError(f"condition {c}: a game appears twice in one pairing group (mixed runs?)")
    tasks = sorted(set(arms[baseline].index) & set(arms[treatment].index))
    every = set(rows.loc[rows[C.condition].isin([baseline, treatment]), C.task_id])
    success = {t: (bool(arms[baseline].at[t, C.success]), bool(arms[treatment].at[t, C.success])) for t in tasks}
    calls = {
        t: (as_int(arms[baseline].at[t, C.model_calls]), as_int(arms[treatment].at[t, C.model_calls])) for t in tasks
    }
    return success, calls, len(every) - len(tasks)


def _contrast(rows: pd.DataFrame, baseline: str, treatment: str, label: str, **keys: Any) -> dict[str, Any]:
    success, calls, dropped = _arms(rows, baseline, treatment)
    return {
        **keys,
        "contrast": label,
        "baseline": baseline,
        "treatment": treatment,
        "baseline_artifact": VARIANTS[baseline],
        "treatment_artifact": VARIANTS[treatment],
        **paired_values(success, calls),
        "unpaired_games": dropped,
    }


def _with_holm(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for item, adjusted in zip(items, holm([i["p"] for i in items]), strict=True):
        item["holm_p"] = adjusted
    return items


def _need(df: pd.DataFrame, conditions: Collection[str], lane: str) -> None:
    missing = [c for c in conditions if c not in set(df[C.condition])]
    if missing:
        raise UsageError(
            f"{lane} lane: condition {', '.join(missing)} absent from the records; "
            f"present: {', '.join(sorted(set(df[C.condition])))}"
        )


def primary(df: pd.DataFrame) -> list[dict[str, Any]]:
    _need(df, {c for pair in PRIMARY_CONTRASTS for c in pair[:2]}, "primary")
    out = []
    for (model, budget, seed), rows in df.groupby([C.model, C.budget, C.sample_seed], sort=True):
        keys = {"model": model, "budget": as_int(budget), "sample_seed": as_int(seed)}
        out += _with_holm([_contrast(rows, b, t, label, **keys) for b, t, label in PRIMARY_CONTRASTS])
    return out


def budget_lane(df: pd.DataFrame) -> list[dict[str, Any]]:
    _need(df, BUDGET_CONTRAST[:2], C.budget)
    out = []
    for model, rows in df.groupby(C.model, sort=True):
        base, treat, label = BUDGET_CONTRAST
        out += _with_holm(
            [
                _contrast(part, base, treat, label, model=model, budget=as_int(budget))
                for budget, part in rows.groupby(C.budget, sort=True)
            ]
        )
    return out


def sampling_lane(df: pd.DataFrame) -> list[dict[str, Any]]:
    _need(df, {c for pair in SAMPLING_CONTRASTS for c in pair[:2]}, "sampling")
    out = []
    for model, rows in df.groupby(C.model, sort=True):
        items = []
        for base, treat, label in SAMPLING_CONTRASTS:
            per_seed = {as_int(s): _arms(part, base, treat) for s, part in rows.groupby(C.sample_seed, sort=True)}
            tasks = sorted(set.intersection(*(set(arms[0]) for arms in per_seed.values())))
            clusters = [
                sum(float(arms[0][t][1]) - float(arms[0][t][0]) for arms in per_seed.values()) / len(per_seed)
                for t in tasks
            ]
            lo, hi = bootstrap_ci(clusters)
            items.append(
                {
                    "model": model,
                    "contrast": label,
                    "baseline": base,
                    "treatment": treat,
                    "baseline_artifact": VARIANTS[base],
                    "treatment_artifact": VARIANTS[treat],
                    "n_game_clusters": len(tasks),
                    "repeats_per_game": len(per_seed),
                    "delta": sum(clusters) / len(clusters) if clusters else math.nan,
                    "ci_low": lo,
                    "ci_high": hi,
                    "p": sign_flip_p(clusters),
                }
            )
        out += _with_holm(items)
    return out


def _column(rows: pd.DataFrame, name: str) -> pd.Series | None:
    return pd.to_numeric(rows[name], errors="coerce") if name in rows.columns else None


def _numbers(rows: pd.DataFrame, name: str) -> pd.Series:
    return pd.to_numeric(rows[name], errors="coerce")


def cost(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Both cost proxies per model x condition, labelled; words only where the protocol recorded them."""
    out = []
    for (model, condition), rows in valid_rows(df).groupby([C.model, C.condition], sort=True):
        words = _column(rows, "extra.prompt_words_user_total")
        tokens = _numbers(rows, C.prompt_tokens) + _numbers(rows, C.completion_tokens)
        recorded = words if words is not None and words.notna().all() else None
        out.append(
            {
                "model": model,
                "condition": condition,
                "paper_name": study.CONDITION_NAMES.get(str(condition), ""),
                "episodes": len(rows),
                "model_calls": int(rows[C.model_calls].sum()),
                "user_prompt_words": int(recorded.sum()) if recorded is not None else None,
                "user_prompt_words_per_call": float(recorded.sum() / rows[C.model_calls].sum())
                if recorded is not None
                else None,
                "tokens": int(tokens.sum()),
                "tokens_per_call": float(tokens.sum() / max(1, rows[C.model_calls].sum())),
            }
        )
    return out


def analyse(df: pd.DataFrame, lane: str) -> dict[str, Any]:
    """The artifact's analysis of one lane's records, with the protocol(s) the records played."""
    if lane not in LANES:
        raise UsageError(f"unknown lane {lane!r}; allowed: {', '.join(LANES)}")
    tests = {"primary": primary, "budget": budget_lane, "sampling": sampling_lane}[lane](df)
    protocols = sorted({str(p) for p in df.get("extra.protocol", pd.Series(dtype=object)).dropna()}) or ["plan"]
    return {
        "method": METHOD,
        "source": SOURCE,
        "lane": lane,
        "protocols": protocols,
        "tests": tests,
        "cost": cost(df),
        "cost_labels": {"user_prompt_words": WORDS_LABEL, "tokens": TOKENS_LABEL},
    }


_SHOWN = (
    C.model,
    C.budget,
    "contrast",
    "baseline",
    "treatment",
    "n",
    "n_game_clusters",
    "delta",
    "ci_low",
    "ci_high",
    "p",
    "holm_p",
    "delta_calls",
    "unpaired_games",
)


def render_text(analysis: dict[str, Any]) -> str:
    """The analysis as plain text: which protocol, which method, the tests and both cost proxies."""
    tests = pd.DataFrame(analysis["tests"])
    tests = tests[[c for c in _SHOWN if c in tests.columns]]
    lines = [
        f"Statistics: the artifact's method ({analysis['method']}; {analysis['source']})",
        f"protocol played: {', '.join(analysis['protocols'])}; lane: {analysis['lane']}",
        tests.to_string(index=False, float_format=lambda v: f"{v:.6g}"),
        "",
        f"Cost: user_prompt_words = {analysis['cost_labels']['user_prompt_words']}; "
        f"tokens = {analysis['cost_labels']['tokens']}",
        pd.DataFrame(analysis["cost"]).to_string(index=False, float_format=lambda v: f"{v:.1f}"),
    ]
    return "\n".join(lines) + "\n"
