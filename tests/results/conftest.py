"""Synthetic run directories for the analysis tests.

The records are built as real `EpisodeRecord`s, so the loader is tested against the schema the
harness writes. Their numbers are arithmetic fixtures, never published or measured results.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.types import EpisodeRecord

QWEN = "qwen2.5-coder-14b-awq"
# which of tasks 0..9 each condition solves, for the mapped Qwen preset
QWEN_SOLVED = {
    "raw": {0, 1, 2, 9},
    "loc_obs": {0, 1, 2, 3},
    "allowed_prose": set(range(8)),
    "allowed_json": set(range(9)),
}


def make_record(
    task: int | str,
    condition: str,
    success: bool | None,
    *,
    model: str = QWEN,
    suite: str = "paper-textworld",
    budget: int = 4,
    sample_seed: int = 0,
    run_id: str = "run-a",
    calls: int | None = None,
    **over,
) -> dict:
    """One record; solved on call 1 = valid first call, solved later = repaired."""
    error = success is None
    calls = calls if calls is not None else (0 if error else (1 if success else budget))
    first_valid = None if error else bool(success and calls == 1)
    fields = dict(
        run_id=run_id,
        suite=suite,
        task_id=f"g{task}" if isinstance(task, int) else task,
        model=model,
        condition=condition,
        budget=budget,
        sample_seed=sample_seed,
        condition_params={"feedback_cut": None, "k_allowed": 12},
        config={"decoding": {"temperature": 0.0}},
        success=success,
        end_reason="harness_error" if error else ("won" if success else "budget"),
        limit_hit=not error and not success,
        model_calls=calls,
        action_calls=calls,
        review_calls=0,
        tool_calls=calls,
        invalid_calls=0 if success else calls,
        first_call_valid=first_valid,
        repaired=bool(success and calls > 1),
        failure_codes=[] if success or error else ["invalid_action"] * calls,
        final_failure=None if success or error else "invalid_action",
        prompt_tokens=100 * calls,
        completion_tokens=20 * calls,
        prompt_words=70 * calls,
        latency_s=0.5 * calls,
        fenced_answers=0,
        calls=[],
        extra={"protocol": "plan"},
        harness_error="HTTP 500 after 4 retries" if error else None,
        transcript="transcripts/x.json",
    )
    fields.update(over)
    return json.loads(EpisodeRecord(**fields).model_dump_json())


def write_run(run_dir: Path, records: list[dict], run_json: dict | None = None, tail: str = "") -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r) + "\n" for r in records) + tail
    (run_dir / "records.jsonl").write_text(text, encoding="utf-8")
    if run_json is not None:
        (run_dir / "run.json").write_text(json.dumps(run_json), encoding="utf-8")
    (run_dir / "transcripts").mkdir(exist_ok=True)
    return run_dir


def paper_like_records(
    model: str = QWEN, solved: dict[str, set[int]] | None = None, tasks: int = 10, run_id: str = "run-a"
) -> list[dict]:
    solved = solved or QWEN_SOLVED
    out = []
    for cond, wins in solved.items():
        for t in range(tasks):
            # tasks 0 and 1 are won on the first call, later wins take two calls
            out.append(
                make_record(
                    t, cond, t in wins, model=model, run_id=run_id, calls=(1 if t < 2 else 2) if t in wins else None
                )
            )
    return out


@pytest.fixture
def paper_run(tmp_path: Path) -> Path:
    """One mapped model, the paper's four conditions, ten tasks, one spec."""
    return write_run(
        tmp_path / "run-a",
        paper_like_records(),
        run_json={
            "run_id": "run-a",
            "spec": {"suite": "paper-textworld", "models": [QWEN], "conditions": list(QWEN_SOLVED)},
        },
    )


@pytest.fixture
def two_model_run(tmp_path: Path) -> Path:
    """The same grid for the mapped Qwen preset and the embedded `local` model."""
    local = {c: {t for t in range(10) if t % 2 == 0} for c in QWEN_SOLVED}
    return write_run(tmp_path / "run-b", paper_like_records() + paper_like_records("local", local))


@pytest.fixture
def kit() -> SimpleNamespace:
    """The builders above, as a fixture (test modules cannot import conftest under importlib mode)."""
    return SimpleNamespace(
        make=make_record, write=write_run, paper_like=paper_like_records, QWEN=QWEN, QWEN_SOLVED=QWEN_SOLVED
    )
