"""A composition in the `problem` form, played through the runner: what reached the agent parses as an
RFC 9457 problem details object with `invalid-params`, and the record names the canonical composition."""

from __future__ import annotations

import json

from harness.runner import play
from harness.spec import build_spec


def test_a_problem_episodes_feedback_is_an_rfc_9457_object(tmp_path):
    written = "allowed+location+retry+code@problem"  # any order: the record keeps the canonical one
    spec = build_spec(
        {
            "suite": "bank-disputes",
            "tasks": 6,
            "models": ["agent:reader"],
            "conditions": [written],
            "out": str(tmp_path),
        }
    )
    play(spec)
    rows = [json.loads(line) for line in (tmp_path / "records.jsonl").read_text().splitlines()]
    assert {r["condition_params"]["composition"] for r in rows} == {"retry+code+location+allowed@problem"}
    problems = []
    for r in rows:
        turns = json.loads((tmp_path / r["transcript"]).read_text())["turns"]
        for turn in turns[1:]:
            sent = turn["messages"][-1]["content"]
            first, _, body = sent.partition("\n")
            if first == "Your previous call failed. Try again.":
                problems.append(json.loads(body))
    assert problems, "some call was rejected and answered"
    for p in problems:
        assert p["status"] == 422 and p["type"].startswith("urn:repair-harness:violation:") and p["title"]
        (entry,) = p["invalid-params"]
        assert set(entry) == {"name", "reason", "allowed"} and entry["name"].startswith("arguments.")
    # the reader repairs from the problem object as from keyed JSON: every task solved
    assert all(r["success"] for r in rows)
