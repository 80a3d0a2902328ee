"""Input contracts of the travel tools: before (notation), core (types), after (cross-field rules
and rules against the schedule: flights that exist, classes they sell, seats they have left)."""

from __future__ import annotations

import datetime as dt
import re

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from envs.tools.notation import normalize_choice, normalize_count, normalize_day
from envs.tools.tooling import fail
from envs.tools.travel.world import AIRPORTS, FareClass, TravelWorld
from envs.validation import context_of as _ctx
from envs.validation import normalizing as _norm

FARE_ALIASES = {
    "эконом": "economy", "экономкласс": "economy", "эконом класс": "economy", "economy class": "economy", "eco": "economy",
    "комфорт": "premium", "премиум": "premium", "премиум эконом": "premium", "premium economy": "premium",
    "бизнес": "business", "бизнес класс": "business", "business class": "business",
}
# stems of city names in any case form people type ("из Москвы", "в Питер", "St Petersburg")
CITY_STEMS = {
    "москв": "SVO", "moscow": "SVO", "шереметьев": "SVO", "sheremetyevo": "SVO",
    "санкт": "LED", "петербург": "LED", "питер": "LED", "спб": "LED", "spb": "LED", "st petersburg": "LED",
    "saint petersburg": "LED", "st. petersburg": "LED", "пулков": "LED", "pulkovo": "LED",
    "казан": "KZN", "kazan": "KZN", "сочи": "AER", "адлер": "AER", "sochi": "AER", "adler": "AER",
    "новосиб": "OVB", "novosibirsk": "OVB", "екатеринбург": "SVX", "екб": "SVX", "yekaterinburg": "SVX", "ekaterinburg": "SVX",
    "калининград": "KGD", "kaliningrad": "KGD", "стамбул": "IST", "istanbul": "IST", "тбилиси": "TBS", "tbilisi": "TBS",
    "дуба": "DXB", "dubai": "DXB",
}
_PREP = re.compile(r"^(?:из|в|во|до|from|to)\s+")
_CODE = re.compile(r"\(([A-Za-z]{3})\)")




def normalize_airport(v: object) -> object:
    """'из Москвы', 'Питер', 'Moscow (SVO)', 'led' -> IATA code."""
    if not isinstance(v, str):
        return v
    m = _CODE.search(v)
    if m:
        return m[1].upper()
    key = _PREP.sub("", " ".join(v.strip().lower().replace("ё", "е").split()))
    if key.upper() in AIRPORTS:
        return key.upper()
    for stem, code in CITY_STEMS.items():
        if key.startswith(stem):
            return code
    return v.strip()


def normalize_flight(v: object) -> object:
    """'su 1234', 'SU-1234', 'рейс SU1234' -> 'SU1234'."""
    if not isinstance(v, str):
        return v
    m = re.search(r"([A-Za-z0-9]{2})[\s-]?(\d{3,4})\s*$", v.strip())
    return f"{m[1].upper()}{m[2]}" if m else v.strip()


def normalize_booking(v: object) -> object:
    """'abc 123', 'ABC-123', 'бронь №abc123' -> 'ABC123'."""
    if not isinstance(v, str):
        return v
    m = re.search(r"([A-Za-z]{3})[\s-]?(\d{3})\s*$", v.strip())
    return f"{m[1].upper()}{m[2]}" if m else v.strip()


def _world(info: ValidationInfo) -> TravelWorld | None:
    return _ctx(info).get("travel")


class SearchFlightsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    origin: str = Field(description="IATA code of the departure airport", pattern=r"^[A-Z]{3}$")
    destination: str = Field(description="IATA code of the arrival airport", pattern=r"^[A-Z]{3}$")
    date: dt.date = Field(description="Day of departure, YYYY-MM-DD")

    @field_validator("origin", "destination", mode="before")
    @classmethod
    def _airport(cls, v: object, info: ValidationInfo) -> object:
        return normalize_airport(v) if _norm(info) else v

    @field_validator("date", mode="before")
    @classmethod
    def _day(cls, v: object, info: ValidationInfo) -> object:
        return normalize_day(v, _ctx(info)["today"], "future") if _norm(info) and "today" in _ctx(info) else v

    @model_validator(mode="after")
    def _rules(self, info: ValidationInfo) -> "SearchFlightsInput":
        for name in ("origin", "destination"):
            if getattr(self, name) not in AIRPORTS:
                raise fail("unknown_airport", "no flights from or to this airport", name, getattr(self, name), list(AIRPORTS))
        if self.origin == self.destination:
            raise fail("same_airport", "destination equals origin", "destination", self.destination, [c for c in AIRPORTS if c != self.origin])
        today = _ctx(info).get("today")
        if today is not None and self.date < today:
            raise fail("date_in_past", "the day is in the past", "date", self.date.isoformat(), [f">= {today.isoformat()}"])
        return self


class BookFlightInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    flight_number: str = Field(description="Flight number, e.g. SU1234", pattern=r"^[A-Z0-9]{2}\d{3,4}$")
    fare_class: FareClass = Field(description="Fare class")
    adults: int = Field(ge=0, le=9, description="Passengers aged 12 or more")
    children: int = Field(0, ge=0, le=9, description="Passengers aged 2 to 11")
    infants: int = Field(0, ge=0, le=9, description="Passengers under 2, on an adult's lap (no seat)")
    return_flight_number: str | None = Field(None, description="Flight number of the way back, for a return trip")

    @field_validator("flight_number", "return_flight_number", mode="before")
    @classmethod
    def _flight(cls, v: object, info: ValidationInfo) -> object:
        return normalize_flight(v) if _norm(info) else v

    @field_validator("fare_class", mode="before")
    @classmethod
    def _fare(cls, v: object, info: ValidationInfo) -> object:
        return normalize_choice(v, FARE_ALIASES) if _norm(info) else v

    @field_validator("adults", "children", "infants", mode="before")
    @classmethod
    def _count(cls, v: object, info: ValidationInfo) -> object:
        return normalize_count(v) if _norm(info) else v

    @model_validator(mode="after")
    def _cross_field(self) -> "BookFlightInput":
        if self.adults + self.children == 0:
            raise fail("no_passengers", "a booking needs at least one seated passenger", "adults", self.adults, ["1..9"])
        if self.infants > self.adults:
            raise fail("infant_requires_adult", "every infant travels on an adult's lap", "infants", self.infants, [f"0..{self.adults}"])
        if self.children and not self.adults:
            raise fail("child_requires_adult", "children travel with an adult", "adults", self.adults, ["1..9"])
        if self.adults + self.children > 9:
            raise fail("too_many_passengers", "at most 9 seats per booking", "adults", self.adults, [f"1..{9 - self.children}"])
        return self

    @model_validator(mode="after")
    def _schedule(self, info: ValidationInfo) -> "BookFlightInput":
        w = _world(info)
        if w is not None:
            check_schedule(self, w)
        return self


def _seats_check(w: TravelWorld, number: str, fare: str, seats: int, field: str) -> None:
    f = w.flight(number)
    assert f is not None
    if fare not in f.fares:
        raise fail("fare_not_offered", "the flight does not sell this class", "fare_class", fare, list(f.fares))
    if f.fares[fare].seats < seats:
        with_room = [c for c, x in f.fares.items() if x.seats >= seats]
        if with_room:
            raise fail("not_enough_seats", "not enough seats left in this class", "fare_class", fare, with_room)
        same_day = [g.number for g in w.flights if (g.origin, g.destination, g.departs.date()) == (f.origin, f.destination, f.departs.date())
                    and fare in g.fares and g.fares[fare].seats >= seats]
        raise fail("not_enough_seats", "not enough seats left on this flight", field, number, same_day)


def check_schedule(inp: BookFlightInput, w: TravelWorld) -> None:
    numbers = [f.number for f in w.flights]
    out = w.flight(inp.flight_number)
    if out is None:
        raise fail("unknown_flight", "no such flight in the schedule", "flight_number", inp.flight_number, numbers)
    seats = inp.adults + inp.children
    _seats_check(w, out.number, inp.fare_class, seats, "flight_number")
    if inp.return_flight_number is None:
        return
    back = w.flight(inp.return_flight_number)
    if back is None:
        raise fail("unknown_flight", "no such flight in the schedule", "return_flight_number", inp.return_flight_number, numbers)
    reverse = [f for f in w.flights if (f.origin, f.destination) == (out.destination, out.origin)]
    if (back.origin, back.destination) != (out.destination, out.origin):
        raise fail("return_route_mismatch", "the way back must fly the outbound route in reverse", "return_flight_number",
                   back.number, [f.number for f in reverse if f.departs > out.arrives])
    if back.departs <= out.arrives:
        raise fail("return_before_departure", "the way back departs before the outbound flight arrives", "return_flight_number",
                   back.number, [f.number for f in reverse if f.departs > out.arrives])
    _seats_check(w, back.number, inp.fare_class, seats, "return_flight_number")


class BookingInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    booking_id: str = Field(description="Booking reference, three letters and three digits", pattern=r"^[A-Z]{3}\d{3}$")

    @field_validator("booking_id", mode="before")
    @classmethod
    def _id(cls, v: object, info: ValidationInfo) -> object:
        return normalize_booking(v) if _norm(info) else v

    @model_validator(mode="after")
    def _exists(self, info: ValidationInfo) -> "BookingInput":
        desk = _ctx(info).get("desk")
        if desk is not None and self.booking_id not in desk.bookings:
            raise fail("unknown_booking", "no booking with this reference", "booking_id", self.booking_id, sorted(desk.bookings))
        return self


class CancelBookingInput(BookingInput):
    @model_validator(mode="after")
    def _active(self, info: ValidationInfo) -> "CancelBookingInput":
        desk = _ctx(info).get("desk")
        if desk is not None and desk.bookings[self.booking_id].status == "cancelled":
            active = sorted(k for k, b in desk.bookings.items() if b.status == "active")
            raise fail("booking_cancelled", "the booking is already cancelled", "booking_id", self.booking_id, active)
        return self
