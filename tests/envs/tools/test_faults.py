"""Backend faults and the output contract: every fault kind under both output shapes."""

import json
import time

import pytest

from envs.contract import Accepted, EpisodeContext, TextAnswer, Violation
from envs.tools.bank.domain import BankTools
from envs.tools.faults import FAULT_KINDS, TIMEOUT_S, FaultPlan
from envs.tools.output import ProblemDetails, ToolOutput
from envs.tools.snapshot import suites
from tests.envs.tools.tools_agents import call, find_env, solve

SUITE = BankTools()
RAW_TEXT = {
    "timeout": "ReadTimeout: The read operation timed out",
    "connection_reset": "ConnectionResetError: [Errno 104] Connection reset by peer",
    "rate_limit": "HTTPStatusError: Client error '429 Too Many Requests' for url 'https://api.bank.example/v1'",
    "unavailable": "HTTPStatusError: Server error '503 Service Unavailable' for url 'https://api.bank.example/v1'",
    "auth": "HTTPStatusError: Client error '401 Unauthorized' for url 'https://api.bank.example/v1'",
}
STATUS = {"timeout": 504, "connection_reset": 502, "rate_limit": 429, "unavailable": 503, "auth": 401}


def faulted(kind, shape):
    options = SUITE.options_model(faults=1.0, fault_shape=shape)
    return find_env(SUITE, options, fault=kind, dialogue="single", kind="dispute")


def write_call(env):
    return next(c for c in env.case.gold_calls if env.tools[c.name].write)


@pytest.mark.parametrize("shape", ["raw", "problem"])
@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_a_fault_is_a_valid_output_object_never_a_violation(kind, shape):
    env = faulted(kind, shape)
    out = env.submit(write_call(env))
    assert isinstance(out, Accepted) and not out.done
    body = ToolOutput.model_validate_json(out.observation)
    assert body.status == "error" and body.data is None
    if shape == "raw":
        assert body.error == RAW_TEXT[kind]
        assert "retry" not in out.observation.lower()  # the exception's text carries no instructions
        return
    problem = ProblemDetails.model_validate(body.error)
    assert problem.status == STATUS[kind] and problem.type.endswith(kind.replace("_", "-"))
    assert problem.retryable is (kind != "auth") and problem.owner_action_required is (kind == "auth")
    assert problem.retry_after == {"auth": None, "timeout": 0, "connection_reset": 0}.get(kind, env.plan.retry_after)
    assert set(json.loads(out.observation)["error"]) >= {
        "type",
        "title",
        "status",
        "detail",
        "retryable",
        "retry_after",
        "owner_action_required",
    }


@pytest.mark.parametrize("kind", ["rate_limit", "unavailable"])
def test_an_early_retry_is_wasted_and_a_retry_after_the_delay_succeeds(kind):
    env = faulted(kind, "problem")
    delay = env.plan.retry_after
    started = time.monotonic()
    env.submit(write_call(env))
    again = env.submit(write_call(env))  # at once: the service has not recovered
    remaining = ProblemDetails.model_validate(json.loads(again.observation)["error"]).retry_after
    assert 0 <= remaining < delay
    assert env.submit(call("wait", seconds=remaining)).done is False
    out = env.submit(write_call(env))
    assert out.done and out.won
    extra = env.record_extra()
    assert (extra["retries"], extra["wasted_calls"], extra["fault_hits"], extra["waited_s"]) == (2, 1, 2, remaining)
    assert extra["fault_outcome"] == "recovered" and extra["clock_s"] >= delay
    assert time.monotonic() - started < 1.0, "simulated time never sleeps"


@pytest.mark.parametrize("kind", ["timeout", "connection_reset"])
def test_transport_faults_clear_at_once_and_a_timeout_costs_its_duration(kind):
    env = faulted(kind, "raw")
    env.submit(write_call(env))
    assert env.transport.clock == (TIMEOUT_S if kind == "timeout" else 1)
    assert env.submit(write_call(env)).won
    assert env.record_extra()["retries"] == 1 and env.record_extra()["wasted_calls"] == 0


@pytest.mark.parametrize("shape", ["raw", "problem"])
def test_retrying_a_permanent_fault_fails_and_telling_the_customer_succeeds(shape):
    env = faulted("auth", shape)
    env.submit(write_call(env))
    out = env.submit(write_call(env))
    assert out.done and out.lost
    assert env.record_extra()["fault_outcome"] == "retried_permanent" and env.record_extra()["wasted_calls"] == 1
    env.reset()
    env.submit(write_call(env))
    other = env.submit(call("find_operations", card_last4=env.case.context["bank"].cards[0]))
    assert other.done and other.lost, "any backend call after the credentials are refused is a retry"
    env.reset()
    env.submit(write_call(env))
    out = env.submit(TextAnswer(text="Sorry, our dispute service refused the request; a colleague will contact you."))
    assert out.done and out.won
    assert env.record_extra()["fault_outcome"] == "reported" and env.record_extra()["state_matches_gold"] is False


def test_reads_pass_before_the_fault_fires_on_the_first_write():
    env = faulted("rate_limit", "problem")
    w = env.case.context["world"]
    assert '"status":"ok"' in env.submit(call("find_operations", card_last4=w.cards[0])).observation
    assert env.record_extra()["fault_outcome"] == "not_reached"
    env.submit(write_call(env))
    assert env.record_extra()["fault_outcome"] == "unresolved" and env.transport.fired_on == write_call(env).name


def test_the_wait_tool_validates_its_argument():
    env = faulted("rate_limit", "problem")
    v = env.submit(call("wait", seconds=0))
    assert isinstance(v, Violation) and v.location == "arguments.seconds" and v.allowed == ["1..600"]
    assert json.loads(env.submit(call("wait", seconds="30 секунд")).observation)["data"]["waited_s"] == 30
    strict = find_env(SUITE, SUITE.options_model(faults=1.0, contract="strict"), fault="rate_limit")
    assert isinstance(strict.submit(call("wait", seconds="30s")), Violation)


def test_the_schedule_is_seeded_and_nested_across_rates():
    seeds = range(7_100_000, 7_100_400)
    low = {s: FaultPlan.draw(s, 0.25) for s in seeds}
    high = {s: FaultPlan.draw(s, 0.5) for s in seeds}
    assert low == {s: FaultPlan.draw(s, 0.25) for s in seeds}
    assert all(high[s] == p for s, p in low.items() if p is not None)
    assert 0.15 < sum(p is not None for p in low.values()) / len(seeds) < 0.35
    assert not any(FaultPlan.draw(s, 0.0) for s in seeds)
    assert {p.kind for p in high.values() if p} == set(FAULT_KINDS)


@pytest.mark.parametrize("shape", ["raw", "problem"])
def test_every_faulted_task_of_every_domain_is_solvable(shape):
    for suite in suites():
        options = suite.options_model(faults=1.0, fault_shape=shape, n_tasks=40)
        for task in suite.tasks(options):
            env = suite.make(task, options, EpisodeContext(budget=4))
            assert solve(env)[-1].won, (suite.name, task.task_id)
            assert env.record_extra()["fault_outcome"] in {"recovered", "reported", "not_reached"}
