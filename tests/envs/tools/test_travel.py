"""tools-travel: notation, every cross-field rule, the schedule rules, and the tasks."""

from datetime import timedelta

import pytest
from pydantic import ValidationError

from envs.contract import Accepted
from envs.tools.travel.contract import BookFlightInput, normalize_airport, normalize_booking, normalize_flight
from envs.tools.travel.domain import TravelTools
from tests.envs.tools.tools_agents import call, every_task_solved, find_env

SUITE = TravelTools()
OPTS = SUITE.options_model(faults=0.0)


@pytest.mark.parametrize(
    "raw, code",
    [
        ("из Москвы", "SVO"),
        ("Москву", "SVO"),
        ("в Питер", "LED"),
        ("СПб", "LED"),
        ("St. Petersburg", "LED"),
        ("Moscow (SVO)", "SVO"),
        ("led", "LED"),
        ("в Сочи", "AER"),
        ("Adler", "AER"),
        ("до Екатеринбурга", "SVX"),
        ("Дубая", "DXB"),
    ],
)
def test_airports_from_city_names_in_any_case_form(raw, code):
    assert normalize_airport(raw) == code


@pytest.mark.parametrize("raw", ["su 1234", "SU-1234", "рейс SU1234", "su1234"])
def test_flight_numbers(raw):
    assert normalize_flight(raw) == "SU1234"


@pytest.mark.parametrize("raw", ["abc 123", "ABC-123", "бронь №abc123", "ABC123"])
def test_booking_references(raw):
    assert normalize_booking(raw) == "ABC123"


def test_fares_and_counts_as_people_write_them():
    inp = BookFlightInput.model_validate(
        {
            "flight_number": "su 1234",
            "fare_class": "Бизнес-класс",
            "adults": "двое",
            "children": "1 child",
            "infants": "one",
        }
    )
    assert (inp.flight_number, inp.fare_class, inp.adults, inp.children, inp.infants) == ("SU1234", "business", 2, 1, 1)
    with pytest.raises(ValidationError):
        BookFlightInput.model_validate(
            {"flight_number": "su 1234", "fare_class": "Бизнес", "adults": "двое"}, context={"normalize": False}
        )


def _rule(args):
    with pytest.raises(ValidationError) as exc:
        BookFlightInput.model_validate({"flight_number": "SU1234", "fare_class": "economy", **args})
    err = exc.value.errors()[0]
    return err["type"], err["ctx"]["field"], err["ctx"]["allowed"]


@pytest.mark.parametrize(
    "args, want",
    [
        ({"adults": 1, "infants": 2}, ("infant_requires_adult", "infants", ["0..1"])),
        ({"adults": 0, "infants": 1, "children": 1}, ("infant_requires_adult", "infants", ["0..0"])),
        ({"adults": 0, "children": 2}, ("child_requires_adult", "adults", ["1..9"])),
        ({"adults": 0}, ("no_passengers", "adults", ["1..9"])),
        ({"adults": 6, "children": 5}, ("too_many_passengers", "adults", ["1..4"])),
    ],
)
def test_passenger_cross_field_rules(args, want):
    assert _rule(args) == want


def _env(**kw):
    return find_env(SUITE, OPTS, dialogue="single", **kw)


def test_search_rules_same_airport_past_day_unknown_airport():
    env = _env(kind="oneway")
    w = env.case.context["travel"]
    v = env.submit(call("search_flights", origin="Москва", destination="Moscow", date=w.out_day.isoformat()))
    assert v.code == "same_airport" and v.location == "arguments.destination" and "SVO" not in v.allowed
    v = env.submit(
        call(
            "search_flights", origin=w.origin, destination=w.destination, date=(w.today - timedelta(days=1)).isoformat()
        )
    )
    assert v.code == "date_in_past" and v.allowed == [f">= {w.today.isoformat()}"]
    v = env.submit(call("search_flights", origin="CDG", destination=w.destination, date=w.out_day.isoformat()))
    assert v.code == "unknown_airport" and v.observed == "CDG" and "SVO" in v.allowed
    v = env.submit(call("search_flights", origin="Paris", destination=w.destination, date=w.out_day.isoformat()))
    assert v.code == "string_pattern_mismatch" and v.observed == "Paris" and "SVO" in v.allowed
    out = env.submit(call("search_flights", origin=w.origin, destination=w.destination, date=w.out_day.isoformat()))
    assert isinstance(out, Accepted) and w.gold_flight in out.observation


def test_schedule_rules_unknown_flight_fare_and_seats():
    env = _env(kind="oneway", pred=lambda e: any(len(f.fares) < 3 for f in e.case.context["travel"].flights))
    w = env.case.context["travel"]
    gold = dict(env.case.gold_calls[0].arguments)
    v = env.submit(call("book_flight", **{**gold, "flight_number": "ZZ999"}))
    assert v.code == "unknown_flight" and w.gold_flight in v.allowed
    lacking = next(f for f in w.flights if len(f.fares) < 3)
    missing = next(c for c in ("economy", "premium", "business") if c not in lacking.fares)
    v = env.submit(call("book_flight", **{**gold, "flight_number": lacking.number, "fare_class": missing}))
    assert v.code == "fare_not_offered" and v.allowed == list(lacking.fares)
    seats = w.flight(w.gold_flight).fares[w.fare].seats
    v = env.submit(call("book_flight", **{**gold, "adults": min(9, seats + 1), "children": 0, "infants": 0}))
    assert v.code == "not_enough_seats" and v.location in {"arguments.fare_class", "arguments.flight_number"}


def test_return_rules_route_and_order():
    env = _env(kind="return")
    w = env.case.context["travel"]
    gold = dict(env.case.gold_calls[0].arguments)
    same_way = next(f.number for f in w.flights if f.origin == w.origin and f.number != w.gold_flight)
    v = env.submit(call("book_flight", **{**gold, "return_flight_number": same_way}))
    assert v.code == "return_route_mismatch" and w.gold_return in v.allowed
    out = w.flight(w.gold_flight)
    early = next(f.number for f in w.flights if f.origin == w.destination and f.departs <= out.arrives)
    v = env.submit(call("book_flight", **{**gold, "return_flight_number": early}))
    assert v.code == "return_before_departure" and early not in v.allowed and w.gold_return in v.allowed
    assert env.submit(call("book_flight", **gold)).won


def test_cancel_rules_unknown_and_already_cancelled():
    env = _env(kind="cancel")
    desk = env.case.context["desk"]
    v = env.submit(call("cancel_booking", booking_id="zzz 999"))
    assert v.code == "unknown_booking" and v.observed == "ZZZ999" and v.allowed == sorted(desk.bookings)
    desk.bookings[env.case.gold_calls[0].arguments["booking_id"]].status = "cancelled"
    v = env.submit(env.case.gold_calls[0])
    assert v.code == "booking_cancelled" and env.case.gold_calls[0].arguments["booking_id"] not in v.allowed


def test_booking_takes_the_seats_and_prints_a_reference():
    env = _env(kind="oneway")
    w = env.case.context["travel"]
    before = w.flight(w.gold_flight).fares[w.fare].seats
    out = env.submit(env.case.gold_calls[0])
    args = env.case.gold_calls[0].arguments
    assert out.won and "BKN001" in out.observation
    assert w.flight(w.gold_flight).fares[w.fare].seats == before - args["adults"] - args["children"]


def test_two_hundred_tasks_all_kinds_deterministic_and_each_solved_by_its_gold_calls():
    every_task_solved(SUITE, OPTS, {"oneway", "return", "cancel"})
