"""bank-disputes: the seed's case, a configuration of the bank domain (one tool, one message, no faults)."""

from datetime import date
from decimal import Decimal

import pytest
from pydantic import ValidationError

from envs import get_suite
from envs.contract import Accepted, EpisodeContext, TextAnswer, ToolCall, Violation
from envs.tools.bank.contract import OpenDisputeInput, normalize_amount, normalize_card
from envs.tools.bank.world import make_world

TODAY = date(2026, 8, 23)


@pytest.mark.parametrize(
    "raw, want",
    [("•• 4417", "4417"), ("*4417", "4417"), ("карта 4417", "4417"), ("4111 1111 1111 4417", "4417"), (4417, "4417")],
)
def test_card_notation_is_normalised(raw, want):
    assert normalize_card(raw) == want


@pytest.mark.parametrize(
    "raw, want",
    [
        ("вчера", date(2026, 8, 22)),
        ("Yesterday", date(2026, 8, 22)),
        ("сегодня", date(2026, 8, 23)),
        ("позавчера", date(2026, 8, 21)),
        ("22.08", date(2026, 8, 22)),
        ("22.08.2026", date(2026, 8, 22)),
        ("22/08/26", date(2026, 8, 22)),
    ],
)
def test_relative_and_dotted_dates_use_the_task_reference_date(raw, want):
    inp = OpenDisputeInput.model_validate({**seed_case(), "operation_date": raw}, context={"today": TODAY})
    assert inp.operation_date == want


@pytest.mark.parametrize(
    "raw, want",
    [
        ("1 200,50 ₽", "1200.50"),
        ("1200,50 руб.", "1200.50"),
        ("RUB 1,200.50", "1200.50"),
        ("1.200,50", "1200.50"),
        ("1\u00a0200.50р", "1200.50"),
    ],
)
def test_amount_notation_is_normalised(raw, want):
    assert Decimal(normalize_amount(raw)) == Decimal(want)


def seed_case():
    return {
        "card_last4": "•• 4417",
        "operation_date": "вчера",
        "amount": "1 200,50 ₽",
        "reason": "Duplicate",
        "original_operation_id": "op-1",
    }


def test_the_seed_example_validates_after_the_before_phase():
    inp = OpenDisputeInput.model_validate(seed_case(), context={"today": TODAY})
    assert (inp.card_last4, inp.operation_date, inp.amount, inp.reason) == (
        "4417",
        date(2026, 8, 22),
        Decimal("1200.50"),
        "duplicate",
    )


def test_strict_contract_rejects_human_notation():
    with pytest.raises(ValidationError):
        OpenDisputeInput.model_validate(seed_case(), context={"today": TODAY, "normalize": False})


def test_duplicate_requires_the_original_operation():
    with pytest.raises(ValidationError) as exc:
        OpenDisputeInput.model_validate({**seed_case(), "original_operation_id": None}, context={"today": TODAY})
    assert exc.value.errors()[0]["type"] == "missing_original_operation"


@pytest.fixture(scope="module")
def bank():
    suite = get_suite("bank-disputes")
    options = suite.options_model()
    return suite, options, suite.tasks(options)


def gold_args(env):
    w = env.state.world
    op = w.op(w.target)
    return {
        "card_last4": op.card_last4,
        "operation_date": op.day.isoformat(),
        "amount": str(op.amount),
        "reason": w.reason,
        "original_operation_id": w.original,
    }


def test_at_least_100_seeded_tasks_all_four_reasons_and_deterministic(bank):
    suite, options, tasks = bank
    assert len(tasks) >= 100
    worlds = [make_world(t.params["seed"]) for t in tasks]
    assert {w.reason for w in worlds} == {"duplicate", "fraud", "not_received", "wrong_amount"}
    assert make_world(tasks[3].params["seed"]) == worlds[3]
    assert len({w.model_dump_json() for w in worlds}) == len(worlds)
    # built without validation (model_construct), each world is one validation would accept unchanged
    assert all(type(w).model_validate(w.model_dump()) == w for w in worlds)


def test_gold_call_solves_every_task_and_the_opening_is_stable(bank):
    suite, options, tasks = bank
    for task in tasks:
        env = suite.make(task, options, EpisodeContext(budget=4))
        first = env.reset()
        assert env.reset() == first
        out = env.submit(ToolCall(name="open_dispute", arguments=gold_args(env)))
        assert isinstance(out, Accepted) and out.won and out.done, task.task_id


def _env(bank, reason):
    suite, options, tasks = bank
    for task in tasks:
        env = suite.make(task, options, EpisodeContext(budget=4))
        env.reset()
        if env.state.world.reason == reason:
            return env
    raise AssertionError(reason)


def test_state_rules_give_location_observed_and_allowed(bank):
    env = _env(bank, "fraud")
    args = gold_args(env)
    v = env.submit(ToolCall(name="open_dispute", arguments={**args, "card_last4": "0000"}))
    assert isinstance(v, Violation) and v.location == "arguments.card_last4" and v.observed == "0000"
    assert sorted(v.allowed) == sorted(env.state.world.cards) and "0000" not in v.message
    v = env.submit(ToolCall(name="open_dispute", arguments={**args, "amount": "1.00"}))
    assert v.location == "arguments.amount" and args["amount"] in v.allowed
    v = env.submit(ToolCall(name="open_dispute", arguments={**args, "reason": "chargeback"}))
    assert v.code == "literal_error" and v.allowed == ["duplicate", "fraud", "not_received", "wrong_amount"]
    assert "duplicate" not in v.message, "the raw message must not list the alternatives"
    assert "Traceback" in v.raw


def test_duplicate_rule_and_unknown_operation_id(bank):
    env = _env(bank, "duplicate")
    args = gold_args(env)
    v = env.submit(ToolCall(name="open_dispute", arguments={**args, "original_operation_id": None}))
    assert v.location == "arguments.original_operation_id" and env.state.world.original in v.allowed
    v = env.submit(ToolCall(name="open_dispute", arguments={**args, "original_operation_id": "op-NOPE00"}))
    assert v.code == "unknown_operation" and v.observed == "op-NOPE00"


def test_wrong_but_valid_dispute_is_a_loss_and_state_is_the_judge(bank):
    env = _env(bank, "duplicate")
    args = gold_args(env)
    out = env.submit(ToolCall(name="open_dispute", arguments={**args, "original_operation_id": env.state.world.target}))
    assert isinstance(out, Accepted) and out.done and out.lost and not out.won
    assert len(env.state.service.disputes) == 1


def test_text_and_unknown_tools_are_violations(bank):
    env = _env(bank, "fraud")
    assert env.submit(TextAnswer(text="I opened it")).code == "no_action"
    v = env.submit(ToolCall(name="refund", arguments={}))
    assert v.code == "unknown_tool" and v.allowed == ["open_dispute"]


def test_the_one_tool_is_the_bank_domains_open_dispute_with_its_schema_unchanged(bank):
    from envs.tools.bank.domain import build
    from envs.tools.snapshot import DISPUTES_PATH, disputes_current, render

    assert DISPUTES_PATH.read_text(encoding="utf-8") == render(disputes_current()), (
        "the schema bank-disputes sends has drifted; "
        "regenerate with `.venv/bin/python -m envs.tools.snapshot` if intended"
    )
    env = _env(bank, "fraud")
    tools_bank = {t.name: t for t in build(7_100_000).tools}["open_dispute"]
    assert (
        env.tools["open_dispute"].model is tools_bank.model
        and env.tools["open_dispute"].spec.description == tools_bank.description
    )


def test_an_unknown_argument_is_answered_with_the_arguments_that_exist(bank):
    env = _env(bank, "fraud")
    v = env.submit(ToolCall(name="open_dispute", arguments={**gold_args(env), "comment": "urgent"}))
    assert v.code == "extra_forbidden" and v.location == "arguments.comment" and v.observed == "urgent"
    assert v.allowed == ["card_last4", "operation_date", "amount", "reason", "original_operation_id"]
