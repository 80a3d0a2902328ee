"""The tool suites through the runner, against the scripted OpenAI-compatible server over HTTP."""

import asyncio
import json
from pathlib import Path

import pytest

from envs.contract import EpisodeContext
from envs.tools.snapshot import suites
from harness.runner import run
from harness.spec import build_spec
from tests.envs.tools.tools_agents import ask_text
from tests.scripted_server import Reply, ScriptedServer
from tests.scripted_server import call as native_call


def _script(env, invent: bool):
    """A scripted agent (generator): it gets the last message, yields the next reply."""
    case = env.case
    if not invent:
        for slot in case.customer.withheld:
            yield Reply(text=ask_text(env, slot))
        if case.customer.correction is not None:
            yield Reply(text=f"Just to confirm: {case.customer.correction.value}?")
    n = 0
    for gold in case.gold_calls:
        while True:
            n += 1
            last = yield Reply(tool_calls=[native_call(gold.name, gold.arguments, f"call_{n}")])
            body = json.loads(last)
            if body["status"] == "ok":
                break
            error = body["error"]
            permanent = (not error["retryable"]) if isinstance(error, dict) else "401" in error
            if permanent:
                yield Reply(text="I am sorry: our service refused the request, a colleague will contact you.")
                return
            delay = (error["retry_after"] or 1) if isinstance(error, dict) else 60
            n += 1
            yield Reply(tool_calls=[native_call("wait", {"seconds": delay}, f"call_{n}")])
    yield Reply(text="Done. Anything else?")


class Agents:
    """One scripted agent per conversation, keyed by the customer's first message."""

    def __init__(self, suite, options, tasks, invent=False):
        self.by_opening = {}
        for task in tasks:
            env = suite.make(task, options, EpisodeContext(budget=4))
            self.by_opening[env.reset().messages[1]["content"]] = env
        self.live, self.invent = {}, invent
        self.tool_messages: list[str] = []

    def __call__(self, body):
        msgs = body["messages"]
        opening = msgs[1]["content"]
        if len(msgs) == 2:
            self.live[opening] = _script(self.by_opening[opening], self.invent)
            return next(self.live[opening])
        if msgs[-1]["role"] == "tool":
            self.tool_messages.append(msgs[-1]["content"])
        return self.live[opening].send(msgs[-1]["content"])


def _writes(case):
    writes = {t.name for t in case.tools if t.write}
    return [c for c in case.gold_calls if c.name in writes]


def _pick(suite, options):
    """Faulted tasks that need a wait, a retry, a report to the customer, and a slot task with a correction."""
    tasks = suite.tasks(options)
    picked = [
        next(
            t
            for t in tasks
            if t.params["fault"] == kind and t.params["dialogue"] == "single" and _writes(suite.build(t.params["seed"]))
        )
        for kind in ("rate_limit", "auth", "timeout")
    ]
    picked.append(next(t for t in tasks if suite.build(t.params["seed"]).customer.correction is not None))
    return picked


def _records(out):
    return [json.loads(line) for line in Path(out, "records.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
def test_every_domain_runs_under_both_fault_conditions(tmp_path, suite):
    env_options = {"faults": 1.0, "schema": "enum"}
    options = suite.options_model(**env_options)
    tasks = _pick(suite, options)
    agents = Agents(suite, options, tasks)
    with ScriptedServer(agents) as server:
        spec = build_spec(
            {
                "suite": suite.name,
                "models": ["scripted-model"],
                "endpoints": [server.url],
                "conditions": ["fault_raw", "fault_problem"],
                "task_ids": [t.task_id for t in tasks],
                "budgets": [12],
                "out": str(tmp_path / "run"),
                "concurrency": 1,
                "tool_mode": "native",
                "env_options": env_options,
            }
        )
        asyncio.run(run(spec))
    rows = _records(spec.out)
    assert len(rows) == 2 * len(tasks)
    for r in rows:
        assert r["success"] is True and r["harness_error"] is None, (r["task_id"], r["condition"], r["extra"])
        shape = r["condition_params"]["env"]["fault_shape"]
        assert r["extra"]["options"]["fault_shape"] == shape and r["config"]["env_options"] == env_options
        assert {"invented", "retries", "wasted_calls", "fault_outcome", "slots_withheld", "customer_turns"} <= set(
            r["extra"]
        )
    outcomes = {
        (r["condition"], r["extra"]["fault"]["kind"]): r["extra"]["fault_outcome"] for r in rows if r["extra"]["fault"]
    }
    assert outcomes[("fault_raw", "auth")] == outcomes[("fault_problem", "auth")] == "reported"
    assert outcomes[("fault_problem", "rate_limit")] == "recovered"
    faults = [json.loads(m)["error"] for m in agents.tool_messages if json.loads(m)["status"] == "error"]
    assert any(isinstance(e, str) and "429 Too Many Requests" in e for e in faults)
    assert any(isinstance(e, dict) and e["status"] == 429 and e["retry_after"] for e in faults)


def test_an_inventing_agent_fails_through_the_runner(tmp_path):
    suite = suites()[1]
    options = suite.options_model(faults=0.0)
    task = next(
        t
        for t in suite.tasks(options)
        if t.params["dialogue"] == "slots" and suite.build(t.params["seed"]).customer.correction is None
    )
    with ScriptedServer(Agents(suite, options, [task], invent=True)) as server:
        spec = build_spec(
            {
                "suite": suite.name,
                "models": ["scripted-model"],
                "endpoints": [server.url],
                "conditions": ["allowed_json"],
                "task_ids": [task.task_id],
                "budgets": [6],
                "out": str(tmp_path / "run"),
                "tool_mode": "native",
                "env_options": {"faults": 0.0},
            }
        )
        asyncio.run(run(spec))
    (r,) = _records(spec.out)
    assert r["success"] is False and r["end_reason"] == "lost" and r["model_calls"] == 1
    assert (
        r["extra"]["end"] == "invented" and r["extra"]["invented_reached_backend"] and r["extra"]["state_matches_gold"]
    )


@pytest.mark.parametrize("contract", ["normalizing", "strict"])
@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
def test_every_domain_runs_under_every_feedback_condition_and_contract(tmp_path, suite, contract):
    env_options = {"faults": 0.0, "contract": contract}
    options = suite.options_model(**env_options)
    task = next(
        t for t in suite.tasks(options) if t.params["dialogue"] == "single" and _writes(suite.build(t.params["seed"]))
    )
    conditions = ["none", "traceback", "raw", "loc_obs", "allowed_prose", "allowed_json"]
    with ScriptedServer(Agents(suite, options, [task])) as server:
        spec = build_spec(
            {
                "suite": suite.name,
                "models": ["scripted-model"],
                "endpoints": [server.url],
                "conditions": conditions,
                "task_ids": [task.task_id],
                "budgets": [8],
                "out": str(tmp_path / "run"),
                "concurrency": 1,
                "tool_mode": "native",
                "env_options": env_options,
            }
        )
        asyncio.run(run(spec))
    rows = _records(spec.out)
    assert sorted(r["condition"] for r in rows) == sorted(conditions)
    assert all(r["success"] is True and r["extra"]["options"]["contract"] == contract for r in rows), [
        r["extra"].get("end") for r in rows
    ]
