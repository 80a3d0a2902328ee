"""tools-bank: the seed's dirty inputs, its cross-field rules, the state rules and the tasks."""

from datetime import date
from decimal import Decimal

import pytest
from pydantic import ValidationError

from envs.contract import Accepted, TextAnswer, Violation
from envs.tools.bank.contract import BlockCardInput, DisputeStatusInput, OpenDisputeInput, normalize_case
from envs.tools.bank.domain import BankTools
from tests.envs.tools.tools_agents import call, every_task_solved, find_env

TODAY = date(2026, 8, 23)
SUITE = BankTools()
OPTS = SUITE.options_model(faults=0.0)


def seed_case(**kw):
    return {
        "card_last4": "•• 4417",
        "operation_date": "вчера",
        "amount": "1 200,50 ₽",
        "reason": "Duplicate",
        "original_operation_id": "op-1",
        **kw,
    }


@pytest.mark.parametrize("raw_date", ["вчера", "22 августа", "Aug 22", "22.08", "22.08.2026", "Yesterday"])
@pytest.mark.parametrize("card", ["•• 4417", "2200 1234 5678 4417", "2200.........4417", "*4417"])
def test_the_seed_example_in_every_notation_normalises(raw_date, card):
    inp = OpenDisputeInput.model_validate(seed_case(operation_date=raw_date, card_last4=card), context={"today": TODAY})
    assert (inp.card_last4, inp.operation_date, inp.amount, inp.reason) == (
        "4417",
        date(2026, 8, 22),
        Decimal("1200.50"),
        "duplicate",
    )


def test_strict_contract_rejects_the_same_notation():
    with pytest.raises(ValidationError):
        OpenDisputeInput.model_validate(seed_case(), context={"today": TODAY, "normalize": False})


@pytest.mark.parametrize("raw", ["№ 42", "№42", "case #0042", "CASE-0042", "дело 0042", "case no. 0042", 42])
def test_case_numbers(raw):
    assert normalize_case(raw) == "case-0042"


@pytest.mark.parametrize(
    "raw, want",
    [
        ("Утеряна", "lost"),
        ("LOST", "lost"),
        ("stolen", "stolen"),
        ("Кража", "stolen"),
        ("мошенничество", "compromised"),
    ],
)
def test_block_reasons_in_any_case_and_language(raw, want):
    assert BlockCardInput.model_validate({"card_last4": "4417", "reason": raw}).reason == want


def test_case_id_pattern_rejects_what_the_strict_contract_does_not_repair():
    with pytest.raises(ValidationError):
        DisputeStatusInput.model_validate({"case_id": "№ 42"}, context={"normalize": False})


def _env(kind, **kw):
    return find_env(SUITE, OPTS, kind=kind, dialogue="single", **kw)


def test_find_operations_date_range_is_a_cross_field_rule():
    env = _env("dispute")
    card = env.case.context["bank"].cards[0]
    v = env.submit(call("find_operations", card_last4=card, date_from="2026-08-20", date_to="2026-08-10"))
    assert isinstance(v, Violation) and v.code == "date_range_reversed"
    assert v.location == "arguments.date_to" and v.observed == "2026-08-10" and v.allowed == [">= 2026-08-20"]


def test_unknown_card_lists_the_customers_cards_and_strict_mode_rejects_bullets():
    env = _env("dispute")
    cards = env.case.context["bank"].cards
    v = env.submit(call("find_operations", card_last4="0000"))
    assert v.code == "unknown_card" and v.allowed == cards and v.observed == "0000"
    strict = find_env(SUITE, SUITE.options_model(faults=0.0, contract="strict"), kind="dispute", dialogue="single")
    v = strict.submit(call("find_operations", card_last4=f"•• {cards[0]}"))
    assert v.code == "string_pattern_mismatch" and v.location == "arguments.card_last4"
    assert isinstance(env.submit(call("find_operations", card_last4=f"•• {cards[0]}")), Accepted)


def test_find_operations_returns_the_statement_of_one_card():
    env = _env("dispute")
    w = env.case.context["world"]
    op = w.op(w.target)
    out = env.submit(
        call("find_operations", card_last4=op.card_last4, date_from=op.day.isoformat(), date_to=op.day.isoformat())
    )
    assert isinstance(out, Accepted) and not out.done
    assert op.id in out.observation and '"status":"ok"' in out.observation


def test_duplicate_without_origin_is_rejected_and_naming_it_solves():
    env = find_env(
        SUITE, OPTS, kind="dispute", dialogue="single", pred=lambda e: e.case.context["world"].reason == "duplicate"
    )
    args = dict(env.case.gold_calls[-1].arguments)
    v = env.submit(call("open_dispute", **{**args, "original_operation_id": None}))
    assert (
        isinstance(v, Violation)
        and v.code == "missing_original_operation"
        and v.location == "arguments.original_operation_id"
    )
    out = env.submit(call("open_dispute", **args))
    assert out.done and out.won and env.record_extra()["end"] == "solved"


def test_blocking_twice_is_rejected_with_the_active_cards():
    env = _env("fraud_block")
    block = env.case.gold_calls[0]
    assert env.submit(block).done is False
    v = env.submit(block)
    assert v.code == "card_already_blocked" and block.arguments["card_last4"] not in v.allowed and v.allowed


def test_a_wrong_irreversible_action_ends_the_episode_lost():
    env = _env("block")
    other = next(c for c in env.case.context["bank"].cards if c != env.case.gold_calls[0].arguments["card_last4"])
    out = env.submit(call("block_card", card_last4=other, reason="lost"))
    assert out.done and out.lost and env.record_extra()["end"] == "diverged"


def test_status_check_answers_the_customer_and_a_blind_block_is_not_a_success():
    calm = find_env(SUITE, OPTS, kind="status", dialogue="single", pred=lambda e: len(e.case.gold_calls) == 1)
    assert calm.submit(TextAnswer(text="Let me check.")).done is False  # not read yet: the customer answers
    assert calm.submit(calm.case.gold_calls[0]).done is False
    out = calm.submit(TextAnswer(text="Your dispute is still in review."))
    assert out.won and calm.record_extra()["end"] == "answered"
    rejected = find_env(SUITE, OPTS, kind="status", dialogue="single", pred=lambda e: len(e.case.gold_calls) == 2)
    out = rejected.submit(rejected.case.gold_calls[1])  # the block, without looking the case up
    assert out.done and not out.won and rejected.record_extra()["end"] == "unchecked"


def test_an_unknown_argument_lists_the_tools_arguments():
    env = _env("dispute")
    v = env.submit(call("open_dispute", **env.case.gold_calls[0].arguments, comment="pls"))
    assert v.code == "extra_forbidden" and v.location == "arguments.comment"
    assert set(v.allowed) == {"card_last4", "operation_date", "amount", "reason", "original_operation_id"}


def test_two_hundred_tasks_all_kinds_deterministic_and_each_solved_by_its_gold_calls():
    tasks, openings = every_task_solved(SUITE, OPTS, {"dispute", "fraud_block", "block", "status"})
    assert {t.params["dialogue"] for t in tasks} == {"single", "slots"}
    assert len(set(openings)) > 150
