"""Multi-turn slot filling: the scripted customer, invented values, confirmations."""

import pytest

from envs.contract import Accepted, EpisodeContext, TextAnswer, Violation
from envs.tools.slots import NOTHING_LEFT, Correction, Customer, SlotStore
from envs.tools.snapshot import suites
from tests.envs.tools.tools_agents import ask_text, find_env, solve

WORDS = {"card": ("карт", "card"), "amount": ("сумм", "amount"), "date": ("дат", "когда", "date", "when")}


def customer(**kw):
    base = dict(
        lang="en",
        phrases={"card": "the card is •• 4417", "amount": "the amount was 1 200,50 ₽", "date": "it was yesterday"},
        opening=["card"],
        withheld=["amount", "date"],
        words=WORDS,
    )
    return Customer(**{**base, **kw})


def test_the_customer_answers_what_is_asked_in_either_language():
    c = customer()
    assert c.respond("Когда это было?") == "It was yesterday."
    assert c.store.revealed("date") and not c.store.revealed("amount")
    assert c.respond("And the AMOUNT?") == "The amount was 1 200,50 ₽."
    assert c.respond("Anything else?") == NOTHING_LEFT["en"]
    assert c.turns == 3


def test_a_vague_question_gets_the_next_slot_and_a_broad_one_gets_all():
    assert customer().respond("What else do you need?") == "The amount was 1 200,50 ₽."
    c = customer()
    c.respond("Please tell me the amount and the date.")
    assert c.missing() == []


def test_empty_values_never_overwrite_a_said_slot():
    store = SlotStore()
    store.update({"amount": "1 200,50 ₽"})
    assert store.update({"amount": None, "date": "", "card": "  "}) == []
    assert store.values == {"amount": "1 200,50 ₽"}
    assert store.update({"amount": "1 340 ₽"}) == ["amount"]


def test_a_correction_comes_with_the_last_slot_and_is_confirmed_by_naming_it():
    fix = Correction(slot="card", message="sorry, it is the card •• 5521", value="•• 5521", value_words=("5521",))
    c = customer(correction=fix)
    c.respond("amount?")
    assert not fix.fired
    assert "5521" in c.respond("and when?") and fix.pending
    assert c.respond("OK.") == NOTHING_LEFT["en"] and fix.pending
    assert c.respond("So the card ending 5521, right?") == "Yes, that's right: •• 5521."
    assert fix.confirmed and not fix.pending


def _writes(env):
    return [c for c in env.case.gold_calls if env.tools[c.name].write]


def _slot_env(suite, pred=None):
    options = suite.options_model(faults=0.0)
    return find_env(
        suite,
        options,
        dialogue="slots",
        pred=lambda e: e.case.customer.correction is None and _writes(e) and (pred is None or pred(e)),
    )


@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
def test_an_agent_that_invents_the_missing_values_fails_even_when_they_validate(suite):
    env = _slot_env(suite)
    assert env.reset().accepts == frozenset({"tool", "text"})
    for write in _writes(env):  # the gold values, guessed before the customer said them
        out = env.submit(write)
        if out.done:
            break
    assert isinstance(out, Accepted) and out.done and out.lost
    extra = env.record_extra()
    assert extra["end"] == "invented" and extra["invented_reached_backend"] is True
    assert extra["state_matches_gold"] is True, "the guess was right, and still a failure"
    hidden = {s for e in extra["invented"] for s in e["slots"]}
    assert hidden and hidden <= set(env.case.customer.withheld)


@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
def test_an_agent_that_asks_first_succeeds(suite):
    env = _slot_env(suite)
    outcomes = solve(env)
    assert outcomes[-1].won
    extra = env.record_extra()
    assert extra["invented"] == [] and extra["customer_turns"] == len(env.case.customer.withheld)
    assert set(extra["slots_withheld"]) <= set(extra["slots_revealed"])
    replies = [o.observation for o in outcomes[: extra["customer_turns"]]]
    assert all(isinstance(r, str) and r for r in replies)


def test_an_invented_value_that_the_validator_rejects_is_recorded_but_not_a_failure():
    suite = suites()[0]
    env = _slot_env(suite, pred=lambda e: "card" in e.case.customer.withheld and e.case.kind == "dispute")
    args = dict(env.case.gold_calls[-1].arguments, card_last4="0000")
    v = env.submit(env.case.gold_calls[-1].model_copy(update={"arguments": args}))
    assert isinstance(v, Violation) and v.code == "unknown_card"
    extra = env.record_extra()
    assert extra["invented"] and not extra["invented_reached_backend"] and extra["end"] is None
    for slot in list(env.case.customer.withheld):
        env.submit(TextAnswer(text=ask_text(env, slot)))
    assert env.submit(env.case.gold_calls[-1]).won


@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
def test_a_corrected_value_must_be_confirmed_before_the_irreversible_call(suite):
    options = suite.options_model(faults=0.0)
    env = find_env(suite, options, dialogue="slots", pred=lambda e: e.case.customer.correction is not None)
    assert not solve(env, confirm=False)[-1].won
    assert env.record_extra()["end"] == "unconfirmed_change" and env.record_extra()["unconfirmed_change"]
    assert solve(env)[-1].won
    assert env.record_extra()["correction"]["confirmed"] is True


def test_every_domain_has_slot_tasks_with_corrections():
    for suite in suites():
        tasks = suite.tasks(suite.options_model())
        slots = [t for t in tasks if t.params["dialogue"] == "slots"]
        assert len(slots) >= 40, suite.name
        envs = [suite.make(t, suite.options_model(), EpisodeContext(budget=4)) for t in slots]
        for e in envs:
            e.reset()
        assert sum(e.case.customer.correction is not None for e in envs) >= 5, suite.name
