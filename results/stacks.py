"""Two serving stacks, one grid: does the stack change the result?

`compare_stacks(run_a, run_b)` pairs the episodes of two run directories by their key (suite,
task, model, condition, budget, seed) and says, per episode, whether the two stacks sent the
same prompts (prompt tokens per call), got the same answers (the text of every model call, from
the transcripts) and scored the same (success, failure codes). Both runs must have played the
same grid under the same model names (`--model local` means SmolLM2 on llama.cpp and on vLLM).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from results.columns import CALL, KEY_FIELDS, C
from results.errors import RecordsError
from results.load import iter_records
from results.rundir import PathLike

_PAIR = KEY_FIELDS


def _answers(run_dir: Path, rec: dict[str, Any]) -> list[str]:
    rel = rec.get(C.transcript)
    if not rel:
        return []
    try:
        data = json.loads((run_dir / rel).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise RecordsError(f"{run_dir / rel}: transcript unreadable ({exc})") from None
    return [str((t.get("answer") or {}).get("text") or "") for t in data.get("turns", [])]


def _by_key(path: PathLike) -> tuple[Path, dict[tuple[Any, ...], dict[str, Any]]]:
    records = list(iter_records(path))
    run_dir = Path(path) if Path(path).is_dir() else Path(path).parent
    return run_dir, {tuple(r[f] for f in _PAIR): r for r in records if r.get(C.success) is not None}


def compare_stacks(run_a: PathLike, run_b: PathLike) -> pd.DataFrame:
    """One row per episode played (without a harness error) in both runs."""
    dir_a, a = _by_key(run_a)
    dir_b, b = _by_key(run_b)
    common = [k for k in a if k in b]
    if not common:
        raise RecordsError(f"{run_a} and {run_b} share no episode (different grids?)")
    rows = []
    for key in common:
        ra, rb = a[key], b[key]
        ta, tb = _answers(dir_a, ra), _answers(dir_b, rb)
        pa = [c[CALL.prompt_tokens] for c in ra[C.calls]]
        pb = [c[CALL.prompt_tokens] for c in rb[C.calls]]
        first = next((i for i, (x, y) in enumerate(zip(ta, tb, strict=False)) if x != y), None)
        rows.append(
            {
                **dict(zip(_PAIR, key, strict=True)),
                "model_a": ra[C.model_id],
                "model_b": rb[C.model_id],
                "calls_a": len(ra[C.calls]),
                "calls_b": len(rb[C.calls]),
                # the first call's prompt is the same conversation on both stacks; later ones depend on answers
                "first_prompt_tokens_equal": pa[:1] == pb[:1],
                "prompt_tokens_a": ra[C.prompt_tokens],
                "prompt_tokens_b": rb[C.prompt_tokens],
                "completion_tokens_a": ra[C.completion_tokens],
                "completion_tokens_b": rb[C.completion_tokens],
                "answers_equal": ta == tb and bool(ta),
                "first_differing_call": first,
                "success_a": ra[C.success],
                "success_b": rb[C.success],
                "success_equal": ra[C.success] == rb[C.success],
                "failures_equal": ra[C.failure_codes] == rb[C.failure_codes],
                "latency_s_a": ra[C.latency_s],
                "latency_s_b": rb[C.latency_s],
            }
        )
    df = pd.DataFrame(rows)
    df["first_differing_call"] = df["first_differing_call"].astype("Int64")  # <NA>: no call differs
    return df


def summary(df: pd.DataFrame) -> dict[str, Any]:
    """The headline figures of a comparison: counts of episodes that agree, and the token totals."""
    return {
        "episodes": len(df),
        "first_prompt_tokens_equal": int(df["first_prompt_tokens_equal"].sum()),
        "answers_equal": int(df["answers_equal"].sum()),
        "success_equal": int(df["success_equal"].sum()),
        "failures_equal": int(df["failures_equal"].sum()),
        "success_a": int(df["success_a"].sum()),
        "success_b": int(df["success_b"].sum()),
        "completion_tokens_a": int(df["completion_tokens_a"].sum()),
        "completion_tokens_b": int(df["completion_tokens_b"].sum()),
        "latency_s_a": round(float(df["latency_s_a"].sum()), 1),
        "latency_s_b": round(float(df["latency_s_b"].sum()), 1),
    }
