"""Identical resubmission and recovery@1 per cell, recomputed from records.jsonl alone: plain JSON,
no pandas, no harness or results module, so that the report's figures can be checked by hand.

    python tests/recompute_dynamics.py RUN_DIR [RUN_DIR ...]

prints one JSON object per line: the cell (condition, model, suite, budget, constrain), retries,
identical retries, identical_resubmission, episodes with a rejection, recovered within one
attempt, recovery_at_1. The definitions are docs/conditions.md's ("How agents repair"), written again here
on purpose: tests/results/test_dynamics.py checks that the report agrees.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ACCEPTED = {"accepted", "won", "lost", "done"}
NOT_ATTEMPTS = {"review", "harness_error"}


def cells(run_dirs: list[str]) -> list[dict]:
    out: dict[tuple, dict] = defaultdict(lambda: {"retries": 0, "identical": 0, "with_rejection": 0, "recovered_1": 0})
    for run_dir in run_dirs:
        for line in Path(run_dir, "records.jsonl").read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            if record["success"] is None:  # a harness error says nothing about the agent
                continue
            key = (
                record["condition"],
                record["model"],
                record["suite"],
                record["budget"],
                record.get("constrain", "none"),
            )
            cell = out[key]
            attempts = [c for c in record["calls"] if c["outcome"] not in NOT_ATTEMPTS]
            rejected = [c["outcome"] not in ACCEPTED for c in attempts]
            for i in range(1, len(attempts)):
                if rejected[i - 1]:
                    cell["retries"] += 1
                    cell["identical"] += bool(attempts[i]["repeats_rejected"])
            # a fork starts at its source's rejected call: its first attempt answers that rejection
            first = -1 if record.get("fork") else (rejected.index(True) if True in rejected else None)
            if first is not None:
                cell["with_rejection"] += 1
                nxt = attempts[first + 1] if first + 1 < len(attempts) else None
                # an accepted answer in text, no call (the turn ended on it), is a give-up, not a recovery
                plan = (record.get("extra") or {}).get("action") == "plan" or (record.get("extra") or {}).get(
                    "protocol"
                ) in ("plan", "veriharness")
                gave_up = nxt is not None and not plan and "tools" in nxt and not nxt["tools"]
                cell["recovered_1"] += nxt is not None and not rejected[first + 1] and not gave_up
    rows = []
    for (condition, model, suite, budget, constrain), c in out.items():
        rows.append(
            {
                "condition": condition,
                "model": model,
                "suite": suite,
                "budget": budget,
                "constrain": constrain,
                "retries": c["retries"],
                "identical_retries": c["identical"],
                "identical_resubmission": c["identical"] / c["retries"] if c["retries"] else None,
                "episodes_with_rejection": c["with_rejection"],
                "recovered_within_1": c["recovered_1"],
                "recovery_at_1": c["recovered_1"] / c["with_rejection"] if c["with_rejection"] else None,
            }
        )
    return rows


if __name__ == "__main__":
    for row in cells(sys.argv[1:]):
        print(json.dumps(row, sort_keys=True))
