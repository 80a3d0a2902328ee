"""TextWorld through the one loop, driven by the scripted server over real HTTP."""

import asyncio
import json
from pathlib import Path

from envs import get_suite
from envs.textworld.suite import PaperTextWorld
from harness.runner import run
from harness.spec import build_spec
from tests.scripted_server import Reply, ScriptedServer, call

SUITE = get_suite("paper-textworld")
assert isinstance(SUITE, PaperTextWorld)
OPTIONS = SUITE.options_model()
SEEDS = [20261051, 20261052]
WALK = {s: SUITE.entry(s, OPTIONS).walkthrough for s in SEEDS}
OBJECTIVE = {SUITE.entry(s, OPTIONS).objective: s for s in SEEDS}


def seed_of(body):
    text = next(m["content"] for m in body["messages"] if m["role"] == "user")
    return next(s for objective, s in OBJECTIVE.items() if objective in text)


def records(spec):
    return [json.loads(line) for line in Path(spec.out, "records.jsonl").read_text().splitlines()]


def test_invalid_plan_then_valid_plan_succeeds_in_two_calls(tmp_path):
    def responder(body):
        seed = seed_of(body)
        retry = "Your previous answer was" in body["messages"][-1]["content"]
        commands = WALK[seed] if retry else ["dance wildly", *WALK[seed]]
        return Reply(text=json.dumps({"answer": {"commands": commands}}))

    with ScriptedServer(responder) as server:
        spec = build_spec(
            {
                "suite": "paper-textworld",
                "models": ["scripted-model"],
                "endpoints": [server.url],
                "conditions": ["allowed_prose", "raw"],
                "task_ids": [f"tw-{s}" for s in SEEDS],
                "feedback_cut": 240,
                "out": str(tmp_path / "run"),
            }
        )
        asyncio.run(run(spec))
    rows = records(spec)
    assert len(rows) == 4
    for r in rows:
        assert r["success"] and r["model_calls"] == 2 and r["failure_codes"] == ["invalid_action"] and r["repaired"]
    retries = [
        b["messages"][-1]["content"]
        for b in server.requests
        if "Your previous answer was" in b["messages"][-1]["content"]
    ]
    assert len(retries) == 4
    assert all(len(b["messages"]) == 2 and "tools" not in b for b in server.requests), (
        "plan protocol: two messages, no tools API"
    )
    prose = [t for t in retries if "allowed values are" in t]
    assert len(prose) == 2 and all(WALK[SEEDS[0]][0] in t or WALK[SEEDS[1]][0] in t for t in prose)


def test_step_protocol_budget_counts_tool_calls(tmp_path):
    def responder(body):
        # three game commands in one answer: a step-protocol budget of 2 lets two of them run
        return Reply(
            text=None, tool_calls=[call("look", {}, "c0"), call("inventory", {}, "c1"), call("look", {}, "c2")]
        )

    with ScriptedServer(responder) as server:
        spec = build_spec(
            {
                "suite": "paper-textworld",
                "models": ["scripted-model"],
                "endpoints": [server.url],
                "conditions": ["allowed_json"],
                "task_ids": ["tw-20261051"],
                "budgets": [2],
                "tool_mode": "native",
                "env_options": {"protocol": "step"},
                "out": str(tmp_path / "run"),
            }
        )
        asyncio.run(run(spec))
    (r,) = records(spec)
    assert r["model_calls"] == 1 and r["tool_calls"] == 2 and r["limit_hit"] and r["success"] is False
