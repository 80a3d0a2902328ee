"""A travel task: a seeded flight schedule, the customer's existing bookings, and what they want."""

from __future__ import annotations

import random
import string
from datetime import date, datetime, time, timedelta
from typing import Literal

from pydantic import BaseModel

FareClass = Literal["economy", "premium", "business"]
FARES: tuple[str, ...] = ("economy", "premium", "business")
AIRLINES = ["SU", "S7", "U6", "DP", "FV", "UT"]
# code -> (Russian nominative, genitive, accusative, English); names are written as people do
AIRPORTS: dict[str, tuple[str, str, str, str]] = {
    "SVO": ("Москва", "Москвы", "Москву", "Moscow"),
    "LED": ("Санкт-Петербург", "Санкт-Петербурга", "Санкт-Петербург", "St. Petersburg"),
    "KZN": ("Казань", "Казани", "Казань", "Kazan"),
    "AER": ("Сочи", "Сочи", "Сочи", "Sochi"),
    "OVB": ("Новосибирск", "Новосибирска", "Новосибирск", "Novosibirsk"),
    "SVX": ("Екатеринбург", "Екатеринбурга", "Екатеринбург", "Yekaterinburg"),
    "KGD": ("Калининград", "Калининграда", "Калининград", "Kaliningrad"),
    "IST": ("Стамбул", "Стамбула", "Стамбул", "Istanbul"),
    "TBS": ("Тбилиси", "Тбилиси", "Тбилиси", "Tbilisi"),
    "DXB": ("Дубай", "Дубая", "Дубай", "Dubai"),
}
Kind = Literal["oneway", "return", "cancel"]
Criterion = Literal["number", "earliest", "cheapest"]
SLOT_SHARE = 0.4
CORRECTION_SHARE = 0.35


class Fare(BaseModel):
    seats: int
    price: int


class Flight(BaseModel):
    number: str
    origin: str
    destination: str
    departs: datetime  # local time of the departure airport
    arrives: datetime
    fares: dict[str, Fare]


class Booking(BaseModel):
    booking_id: str
    flight: str
    return_flight: str | None
    fare_class: str
    adults: int
    children: int
    infants: int
    status: Literal["active", "cancelled"] = "active"


class TravelWorld(BaseModel):
    seed: int
    today: date
    kind: Kind
    dialogue: Literal["single", "slots"]
    origin: str
    destination: str
    flights: list[Flight]
    bookings: list[Booking]
    # the wish
    criterion: Criterion
    out_day: date
    back_day: date | None
    fare: str
    adults: int
    children: int
    infants: int
    gold_flight: str | None
    gold_return: str | None
    cancel_id: str | None
    withheld: list[str]
    said_adults: int | None  # the adult count first said, before the customer corrects it

    def flight(self, number: str) -> Flight | None:
        return next((f for f in self.flights if f.number == number), None)


def _flights(rng: random.Random, a: str, b: str, day: date, used: set[str]) -> list[Flight]:
    out: list[Flight] = []
    hours = rng.sample(range(12, 44), rng.randint(2, 4))  # half-hour slots 06:00..21:30
    for h in sorted(hours):
        while (number := f"{rng.choice(AIRLINES)}{rng.randint(100, 9999)}") in used:
            pass
        used.add(number)
        dep = datetime.combine(day, time(h // 2, 30 * (h % 2)))
        base = rng.randint(40, 200) * 100 + len(out) * 7  # distinct prices, so "the cheapest" is one flight
        fares = {"economy": Fare(seats=rng.randint(0, 9), price=base)}
        if rng.random() < 0.5:
            fares["premium"] = Fare(seats=rng.randint(0, 6), price=base * 16 // 10)
        if rng.random() < 0.6:
            fares["business"] = Fare(seats=rng.randint(0, 4), price=base * 3)
        out.append(
            Flight(
                number=number,
                origin=a,
                destination=b,
                departs=dep,
                arrives=dep + timedelta(minutes=rng.randint(60, 300)),
                fares=fares,
            )
        )
    return out


def _pick(rng: random.Random, flights: list[Flight], crit: Criterion, fare: str, seats: int) -> Flight:
    """Make the wished flight unambiguous: every flight that day offering the class has the seats."""
    offering = [f for f in flights if fare in f.fares]
    if not offering:
        f = rng.choice(flights)
        f.fares[fare] = Fare(seats=seats, price=f.fares["economy"].price * 2)
        offering = [f]
    for f in offering:
        f.fares[fare].seats = max(f.fares[fare].seats, seats)
    if crit == "earliest":
        return min(offering, key=lambda f: f.departs)
    if crit == "cheapest":
        return min(offering, key=lambda f: f.fares[fare].price)
    return rng.choice(offering)


def _pnr(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_uppercase, k=3)) + "".join(rng.choices(string.digits, k=3))


def make_travel_world(seed: int) -> TravelWorld:
    rng = random.Random(seed)
    today = date(2026, 1, 12) + timedelta(days=rng.randint(0, 300))
    a, b = rng.sample(list(AIRPORTS), 2)
    u = rng.random()
    kind: Kind = "oneway" if u < 0.45 else "return" if u < 0.8 else "cancel"
    out_day = today + timedelta(days=rng.randint(3, 45))
    back_day = out_day + timedelta(days=rng.randint(2, 12))
    used: set[str] = set()
    flights = [f for d in (-1, 0, 1) for f in _flights(rng, a, b, out_day + timedelta(days=d), used)]
    flights += [f for d in (-1, 0) for f in _flights(rng, b, a, out_day + timedelta(days=d), used)]
    flights += [f for d in (-1, 0, 1) for f in _flights(rng, b, a, back_day + timedelta(days=d), used)]
    adults = rng.choice([1, 1, 2, 2, 3])
    children = rng.choice([0, 0, 0, 1, 2])
    infants = 1 if rng.random() < 0.25 else 0
    said_adults = None
    fare = rng.choice(["economy", "economy", "premium", "business"])
    criterion: Criterion = rng.choice(["number", "earliest", "cheapest"])
    dialogue: Literal["single", "slots"] = "slots" if rng.random() < SLOT_SHARE else "single"
    slots = {
        "oneway": ["date", "passengers", "fare"],
        "return": ["date", "return", "passengers", "fare"],
        "cancel": ["booking"],
    }[kind]
    withheld: list[str] = []
    if dialogue == "slots":
        withheld = sorted(rng.sample(slots, rng.randint(1, len(slots))), key=slots.index)
        if kind != "cancel" and "passengers" not in withheld and rng.random() < CORRECTION_SHARE:
            said_adults = adults + 1 if adults < 3 else adults - 1
    seats = adults + children + 1  # one spare, so a correction upwards still fits
    day_flights = [f for f in flights if f.origin == a and f.departs.date() == out_day]
    gold = _pick(rng, day_flights, criterion, fare, seats)
    gold_return = None
    if kind == "return":
        back = [f for f in flights if f.origin == b and f.departs.date() == back_day]
        gold_return = _pick(rng, back, criterion, fare, seats).number
    bookings = []
    for _ in range(rng.randint(1, 3)):
        f = rng.choice(flights)
        bookings.append(
            Booking(
                booking_id=_pnr(rng),
                flight=f.number,
                return_flight=None,
                fare_class="economy",
                adults=rng.randint(1, 2),
                children=0,
                infants=0,
            )
        )
    cancel_id = rng.choice(bookings).booking_id if kind == "cancel" else None
    return TravelWorld(
        seed=seed,
        today=today,
        kind=kind,
        dialogue=dialogue,
        origin=a,
        destination=b,
        flights=flights,
        bookings=bookings,
        criterion=criterion,
        out_day=out_day,
        back_day=back_day if kind == "return" else None,
        fare=fare,
        adults=adults,
        children=children,
        infants=infants,
        gold_flight=None if kind == "cancel" else gold.number,
        gold_return=gold_return,
        cancel_id=cancel_id,
        withheld=withheld,
        said_adults=said_adults,
    )
