"""The JSON report of a fixed set of records, pinned byte for byte.

The records come from a seeded generator below (arithmetic fixtures, no model ran): both lanes
(the mapped Qwen preset on sample seed 0, `local` on three sampling seeds), harness errors (one
retried successfully, as a resume does), 1-4 call logs per episode, records of an older layout
(no `usage_missing`, no `prompt_words`), episodes whose token usage is unknown, and a cut
trailing line. A change that moves any number, key or row of the report fails here; a change
meant to move them regenerates the goldens and says why in its commit:

    .venv/bin/python tests/results/test_report_golden.py
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from results import load, render_report

GOLDEN = Path(__file__).parents[1] / "data" / "report-golden"
CONDITIONS = ("raw", "loc_obs", "allowed_prose", "allowed_json")
P_SOLVE = {"raw": 0.3, "loc_obs": 0.4, "allowed_prose": 0.6, "allowed_json": 0.7}
LANES = (("qwen2.5-coder-14b-awq", (0,), 24), ("local", (3101, 3102, 3103), 8))
# name -> render_report arguments
# render_report's keyword arguments, per golden file
REPORTS: dict[str, dict[str, Any]] = {
    "default": {},
    "asked-by": {"contrasts": "allowed_json-raw,loc_obs-raw", "by": ["fenced_answers"], "headline": True},
}


def _record(rng: random.Random, model: str, seed: int, task: int, cond: str) -> dict:
    error = rng.random() < 0.05
    success = None if error else rng.random() < P_SOLVE[cond]
    n_calls = 0 if error else (rng.randint(1, 4) if success else 4)
    calls: list[dict[str, Any]] = [
        {
            "kind": "action",
            "prompt_tokens": rng.randint(600, 1400),
            "completion_tokens": rng.randint(10, 80),
            "latency_s": round(rng.uniform(0.2, 2.0), 4),
            "outcome": "won" if success and i == n_calls - 1 else rng.choice(["invalid_action", "bad_json"]),
        }
        for i in range(n_calls)
    ]
    codes = [c["outcome"] for c in calls if c["outcome"] != "won"]
    unknown_usage = not error and rng.random() < 0.03
    rec = {
        "schema_version": 1,
        "run_id": "golden",
        "suite": "paper-textworld",
        "task_id": f"g{task:03d}",
        "model": model,
        "condition": cond,
        "budget": 4,
        "sample_seed": seed,
        "condition_params": {"feedback": cond, "cut": 240},
        "config": {"decoding": {"temperature": 0.3 if seed else 0.0}},
        "model_id": model,
        "success": success,
        "end_reason": "harness_error" if error else ("won" if success else "budget"),
        "limit_hit": not error and not success,
        "model_calls": n_calls,
        "invalid_calls": len(codes),
        "first_call_valid": None if error else n_calls == 1 and bool(success),
        "repaired": bool(success and n_calls > 1),
        "failure_codes": codes,
        "final_failure": None if success or error else codes[-1],
        "prompt_tokens": None if unknown_usage else sum(c["prompt_tokens"] for c in calls),
        "completion_tokens": sum(c["completion_tokens"] for c in calls),
        "usage_missing": int(unknown_usage),
        "prompt_words": sum(c["prompt_tokens"] for c in calls) // 2,
        "latency_s": round(sum(c["latency_s"] for c in calls), 4),
        "fenced_answers": rng.randint(0, 1),
        "calls": calls,
        "extra": {"protocol": "plan"},
        "harness_error": "HTTP 500 after 4 retries" if error else None,
    }
    if rng.random() < 0.1:  # an older record: fields added since are absent, not null
        del rec["usage_missing"], rec["prompt_words"]
    return rec


def records(seed: int = 15) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for model, seeds, tasks in LANES:
        for task in range(tasks):
            for s in seeds:
                for cond in CONDITIONS:
                    out.append(_record(rng, model, s, task, cond))
    # a harness error that a resume retried with success: the episode counts once, as ok
    retried = next(r for r in out if r["success"] is None)
    out.append(
        {
            **retried,
            "success": True,
            "end_reason": "won",
            "harness_error": None,
            "limit_hit": False,
            "model_calls": 1,
            "first_call_valid": True,
        }
    )
    return out


def write(run_dir: Path) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    lines = "".join(json.dumps(r) + "\n" for r in records())
    (run_dir / "records.jsonl").write_text(lines + '{"run_id": "golden", "suite"', encoding="utf-8")
    return run_dir


def render(name: str) -> str:
    """The report of the fixture run as `render_report` writes it; run from the run's parent
    folder so that meta.run_dirs reads `run`, not a temporary path."""
    return render_report(load(Path("run")), fmt="json", **REPORTS[name]) + "\n"


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_report_json_matches_golden(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    assert render(name) == (GOLDEN / f"{name}.json").read_text(encoding="utf-8")


def test_fixture_covers_what_the_report_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The goldens pin every path only while the fixture has both lanes, errors, usage gaps and old records."""
    write(tmp_path / "run")
    monkeypatch.chdir(tmp_path)
    report = json.loads(render("default"))
    assert {r["lane"] for r in report["contrasts"]} == {"paired", "sampling"}
    assert report["meta"]["harness_errors"] > 0 and report["meta"]["partial_lines"] == 1
    assert report["unpaired"] and any(c["usage_unknown"] for c in report["cells"])
    df = load(Path("run"))
    assert df["usage_missing"].isna().any() and df["prompt_words"].isna().any()


if __name__ == "__main__":
    import os
    import tempfile

    GOLDEN.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp) / "run")
        here = os.getcwd()
        os.chdir(tmp)
        try:
            texts = {name: render(name) for name in REPORTS}
        finally:
            os.chdir(here)
    for name, text in texts.items():
        (GOLDEN / f"{name}.json").write_text(text, encoding="utf-8")
        print(f"wrote {GOLDEN / name}.json ({len(text)} bytes)")
