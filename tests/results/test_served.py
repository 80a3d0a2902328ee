"""What the report says of how each model was served, read from run.json (results/served.py)."""

from __future__ import annotations

import json

from results import served


def write_meta(run_dir, sessions):
    run_dir.mkdir(parents=True)
    (run_dir / "run.json").write_text(
        json.dumps({"run_id": "r", "identity_hash": "h", "spec": {}, "sessions": sessions})
    )


def test_the_latest_session_says_each_models_concurrency_and_the_preflights_warnings(tmp_path):
    adaptive = {"mode": "adaptive", "start": 8, "bound": 256, "peak": 27, "final": 18, "backoffs": 2, "polls": 40}
    warned = {"preflight": [{"passed": True, "checks": {"determinism": {"status": "warn", "detail": "differed"}}}]}
    write_meta(
        tmp_path / "a",
        [
            {"concurrency": {"qwen2.5-7b": {"mode": "fixed", "workers": 4}}},
            {"concurrency": {"qwen2.5-7b": adaptive}, "served": {"qwen2.5-7b": warned}},
        ],
    )
    per_endpoint = {"mode": "per endpoint", "endpoints": [{"mode": "fixed", "workers": 2}] * 2}
    write_meta(tmp_path / "b", [{"concurrency": {"m": per_endpoint}, "served": {"m": {"backend": "openai"}}}])
    notes = served.notes([str(tmp_path / "a"), str(tmp_path / "b")])
    assert notes["concurrency"] == {
        "m": "2 at a time; 2 at a time (per endpoint)",
        "qwen2.5-7b": "adaptive to the server's batch: 8 at first, up to 27, 18 at the end (bound 256, 2 back-offs)",
    }
    assert notes["nondeterministic"] == ["qwen2.5-7b"]


def test_runs_that_say_nothing_of_it_give_nothing(tmp_path):
    write_meta(tmp_path / "old", [{"versions": {}}])
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "run.json").write_text("{")
    assert served.notes([str(tmp_path / "old"), str(tmp_path / "broken"), str(tmp_path / "absent")]) == {}
