"""results.stacks: two run directories of one grid, paired by episode key, compared field by field."""

import json

import pandas as pd
import pytest

from results.errors import RecordsError
from results.stacks import compare_stacks, summary


def _run(path, episodes):
    """A run directory with one record and one transcript per (task, answers, success, tokens)."""
    (path / "transcripts").mkdir(parents=True)
    lines = []
    for task, answers, success, prompt in episodes:
        rel = f"transcripts/{task}.json"
        (path / rel).write_text(json.dumps({"turns": [{"answer": {"text": a}} for a in answers]}))
        lines.append(
            json.dumps(
                {
                    "suite": "bank-disputes",
                    "task_id": task,
                    "model": "local",
                    "condition": "raw",
                    "budget": 1,
                    "sample_seed": 0,
                    "success": success,
                    "model_id": "m",
                    "failure_codes": [] if success else ["no_action"],
                    "prompt_tokens": sum(prompt),
                    "completion_tokens": 5 * len(answers),
                    "latency_s": 1.0,
                    "calls": [{"prompt_tokens": p} for p in prompt],
                    "transcript": rel,
                }
            )
        )
    (path / "records.jsonl").write_text("\n".join(lines) + "\n")
    return path


def test_episodes_pair_by_key_and_each_agreement_is_counted(tmp_path):
    a = _run(tmp_path / "a", [("t1", ["x", "y"], True, [10, 20]), ("t2", ["p"], False, [7]), ("t3", ["q"], False, [9])])
    b = _run(tmp_path / "b", [("t1", ["x", "y"], True, [10, 20]), ("t2", ["other"], True, [8])])
    df = compare_stacks(a, b).set_index("task_id")
    assert list(df.index) == ["t1", "t2"]  # t3 was played on one stack only
    assert df.loc["t1", "answers_equal"] and pd.isna(df.loc["t1", "first_differing_call"])
    assert not df.loc["t2", "answers_equal"] and df.loc["t2", "first_differing_call"] == 0
    assert not df.loc["t2", "first_prompt_tokens_equal"] and not df.loc["t2", "success_equal"]
    s = summary(df.reset_index())
    assert (s["episodes"], s["answers_equal"], s["success_equal"], s["success_a"], s["success_b"]) == (2, 1, 1, 1, 2)


def test_runs_of_different_grids_are_refused(tmp_path):
    a = _run(tmp_path / "a", [("t1", ["x"], True, [1])])
    b = _run(tmp_path / "b", [("t9", ["x"], True, [1])])
    with pytest.raises(RecordsError, match="share no episode"):
        compare_stacks(a, b)
