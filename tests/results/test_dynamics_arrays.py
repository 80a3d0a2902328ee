"""The columnar repair dynamics (results.dynamics_arrays) give what `episode_columns` gives record by
record, on records drawn to reach every branch: reviews and harness errors among the calls, unknown
signatures and usage, call logs without `tools`, plans and commands, imports cut at a divergence."""

from __future__ import annotations

import math
import random

import pyarrow as pa
import pytest

from results.dynamics import COLUMNS, episode_columns
from results.dynamics_arrays import CALLS_TYPE, Episodes, NotColumnar, episode_arrays

OUTCOMES: list[str | None] = ["accepted", "won", "lost", "done", "review", "harness_error", "invalid_action"]
OUTCOMES += ["missing_field", "refusal", "wrong_type", None]
TOOLS = ["a", "b", "c"]


def _call(rng: random.Random) -> dict:
    call: dict = {"outcome": rng.choice(OUTCOMES)}
    if rng.random() < 0.9:
        call["signature"] = rng.choice(["s1", "s2", "s3"])
    if rng.random() < 0.95:
        call["tools"] = rng.sample(TOOLS, rng.randint(0, 2))
    if rng.random() < 0.5:
        call["repeats_rejected"] = rng.random() < 0.5
    for f in ("prompt_tokens", "completion_tokens"):
        if rng.random() < 0.95:
            call[f] = rng.randint(0, 100)
    return call


def _record(rng: random.Random) -> dict:
    rec: dict = {}
    if rng.random() < 0.95:
        rec["calls"] = [_call(rng) for _ in range(rng.randint(0, 7))]
    if rng.random() < 0.9:
        rec["config"] = {"decoding": {"temperature": rng.choice([0, 0.0, 0.7, None])}}
    extra: dict = {}
    if rng.random() < 0.5:
        extra["action"] = rng.choice(["plan", "command", "call", "", "other", None])
    if rng.random() < 0.5:
        extra["protocol"] = rng.choice(["plan", "veriharness", "step", "bfcl", None])
    if rng.random() < 0.2:
        extra["replay"] = {"divergence": {"answer": rng.randint(-3, 5)}}
    rec["extra"] = extra
    if rng.random() < 0.3:
        rec["fork"] = rng.choice(["", None, "src|t1|m|raw|4|0#2"])
    return rec


def _episodes(records: list[dict]) -> Episodes:
    def get(rec: dict, *path: str) -> object:
        for p in path:
            rec = rec.get(p) if isinstance(rec, dict) else None  # type: ignore[assignment]
        return rec

    return Episodes(
        calls=pa.array([r.get("calls") for r in records], type=CALLS_TYPE),
        temperature=pa.array([get(r, "config", "decoding", "temperature") for r in records], type=pa.float64()),
        action=pa.array([get(r, "extra", "action") for r in records], type=pa.string()),
        protocol=pa.array([get(r, "extra", "protocol") for r in records], type=pa.string()),
        answer=pa.array([get(r, "extra", "replay", "divergence", "answer") for r in records], type=pa.int64()),
        fork=pa.array([r.get("fork") for r in records], type=pa.string()),
    )


@pytest.mark.parametrize("seed", range(4))
def test_the_columnar_dynamics_are_episode_columns(seed):
    rng = random.Random(seed)
    records = [_record(rng) for _ in range(3000)]
    arrays = episode_arrays(_episodes(records))
    assert set(arrays) == set(COLUMNS)
    for i, rec in enumerate(records):
        want = episode_columns(rec)
        got = {k: None if none[i] else values[i] for k, (values, none) in arrays.items()}
        for k in COLUMNS:
            w, g = want[k], got[k]
            assert (w is None) == (g is None), (k, rec, w, g)
            if w is not None:
                assert w == g and not (isinstance(g, float) and math.isnan(g)), (k, rec, w, g)


@pytest.mark.parametrize("records", [[{}], [{"calls": []}, {"calls": []}], [{"calls": [], "extra": {}}]])
def test_episodes_without_a_call(records):
    arrays = episode_arrays(_episodes(records))
    for i, rec in enumerate(records):
        want = episode_columns(rec)
        assert {k: None if none[i] else values[i] for k, (values, none) in arrays.items()} == want


def test_a_call_log_entry_that_is_no_object_is_left_to_the_per_record_reader():
    with pytest.raises(NotColumnar):
        episode_arrays(_episodes([{"calls": [None]}]))
