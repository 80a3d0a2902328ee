"""Recorded BFCL episodes re-judged from the records alone, by BFCL's own checker called here
directly (entry and ground truth read from the package's data files, call strings written here),
agree with every record's success; a record that reached fewer turns than its entry is a failure."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app

pytestmark = pytest.mark.extra("bfcl")


def _bfcl_data():
    import bfcl_eval

    return Path(bfcl_eval.__file__).parent / "data"


def _entry(category, entry_id):
    data = _bfcl_data()

    def lines(p):
        return [json.loads(x) for x in p.read_text().splitlines() if x.strip()]

    entry = next(e for e in lines(data / f"BFCL_v4_multi_turn_{category}.json") if e["id"] == entry_id)
    truth = next(
        e for e in lines(data / "possible_answer" / f"BFCL_v4_multi_turn_{category}.json") if e["id"] == entry_id
    )
    return entry, truth["ground_truth"]


def _rejudge(record, n):
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    b = record["extra"]["bfcl"]
    entry, truth = _entry(b["category"], b["entry_id"])
    if b["turns_answered"] < len(truth):
        return False
    decoded = [
        [[f"{c['name']}({', '.join(f'{k}={v!r}' for k, v in c['arguments'].items())})" for c in turn]] if turn else []
        for turn in b["executed"]
    ]
    name = f"rejudge_{n}"
    try:
        return multi_turn_checker(decoded, truth, entry, entry["id"].rsplit("_", 1)[0], name)["valid"]
    finally:
        for k in [k for k in vars(multi_turn_utils) if k.startswith(name)]:
            del vars(multi_turn_utils)[k]


@pytest.mark.parametrize(
    "suite, models, conditions, tasks",
    [
        ("bfcl-base", "agent:reader,agent:random,agent:stubborn", "none,raw,allowed_json", 200),
        ("bfcl-miss-func", "agent:gold,agent:reader", "raw,allowed_prose", 60),
        ("bfcl-long-context", "agent:reader", "loc_obs", 40),
    ],
)
def test_every_recorded_verdict_is_bfcls_own_on_the_recorded_calls(tmp_path, suite, models, conditions, tasks):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app,
        [
            "run",
            "--suite",
            suite,
            "--model",
            models,
            "--conditions",
            conditions,
            "--tasks",
            str(tasks),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert len(records) == tasks * len(models.split(",")) * len(conditions.split(","))
    verdicts = [(r["success"], _rejudge(r, i)) for i, r in enumerate(records)]
    assert all(recorded == again for recorded, again in verdicts)
    # both verdicts occur, so a checker that always said one thing would fail here
    assert {v for v, _ in verdicts} == {True, False}
    if "agent:random" in models:
        random = [r for r in records if r["model"] == "agent:random"]
        assert sum(r["extra"]["bfcl"]["turns_answered"] >= 2 for r in random) > len(random) // 2
        assert not any(r["success"] for r in random)
