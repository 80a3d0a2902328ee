"""Input contracts of the travel tools: before (notation), core (types), after (cross-field rules
and rules against the schedule: flights that exist, classes they sell, seats they have left)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field

from envs.tools.fields import Count, FutureDay, choice
from envs.tools.tooling import ToolInput
from envs.tools.travel.world import AIRPORTS, FareClass, TravelWorld
from envs.validation import fail, normalised

FARE_ALIASES = {
    "эконом": "economy",
    "экономкласс": "economy",
    "эконом класс": "economy",
    "economy class": "economy",
    "eco": "economy",
    "комфорт": "premium",
    "премиум": "premium",
    "премиум эконом": "premium",
    "premium economy": "premium",
    "бизнес": "business",
    "бизнес класс": "business",
    "business class": "business",
}
# stems of city names in any case form people type ("из Москвы", "в Питер", "St Petersburg")
CITY_STEMS = {
    "москв": "SVO",
    "moscow": "SVO",
    "шереметьев": "SVO",
    "sheremetyevo": "SVO",
    "санкт": "LED",
    "петербург": "LED",
    "питер": "LED",
    "спб": "LED",
    "spb": "LED",
    "st petersburg": "LED",
    "saint petersburg": "LED",
    "st. petersburg": "LED",
    "пулков": "LED",
    "pulkovo": "LED",
    "казан": "KZN",
    "kazan": "KZN",
    "сочи": "AER",
    "адлер": "AER",
    "sochi": "AER",
    "adler": "AER",
    "новосиб": "OVB",
    "novosibirsk": "OVB",
    "екатеринбург": "SVX",
    "екб": "SVX",
    "yekaterinburg": "SVX",
    "ekaterinburg": "SVX",
    "калининград": "KGD",
    "kaliningrad": "KGD",
    "стамбул": "IST",
    "istanbul": "IST",
    "тбилиси": "TBS",
    "tbilisi": "TBS",
    "дуба": "DXB",
    "dubai": "DXB",
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


Airport = Annotated[str, Field(pattern=r"^[A-Z]{3}$"), normalised(normalize_airport)]
FlightNumber = Annotated[str, normalised(normalize_flight)]


class SearchFlightsInput(ToolInput):
    origin: Airport = Field(description="IATA code of the departure airport")
    destination: Airport = Field(description="IATA code of the arrival airport")
    date: FutureDay = Field(description="Day of departure, YYYY-MM-DD")

    def rules(self, ctx: dict[str, Any]) -> None:
        for name in ("origin", "destination"):
            if getattr(self, name) not in AIRPORTS:
                raise fail(
                    "unknown_airport", "no flights from or to this airport", name, getattr(self, name), list(AIRPORTS)
                )
        if self.origin == self.destination:
            raise fail(
                "same_airport",
                "destination equals origin",
                "destination",
                self.destination,
                [c for c in AIRPORTS if c != self.origin],
            )
        today = ctx.get("today")
        if today is not None and self.date < today:
            raise fail(
                "date_in_past", "the day is in the past", "date", self.date.isoformat(), [f">= {today.isoformat()}"]
            )


class BookFlightInput(ToolInput):
    flight_number: FlightNumber = Field(description="Flight number, e.g. SU1234", pattern=r"^[A-Z0-9]{2}\d{3,4}$")
    fare_class: Annotated[FareClass, choice(FARE_ALIASES)] = Field(description="Fare class")
    adults: Count = Field(ge=0, le=9, description="Passengers aged 12 or more")
    children: Count = Field(0, ge=0, le=9, description="Passengers aged 2 to 11")
    infants: Count = Field(0, ge=0, le=9, description="Passengers under 2, on an adult's lap (no seat)")
    return_flight_number: FlightNumber | None = Field(
        None, description="Flight number of the way back, for a return trip"
    )

    def rules(self, ctx: dict[str, Any]) -> None:
        if self.adults + self.children == 0:
            raise fail(
                "no_passengers", "a booking needs at least one seated passenger", "adults", self.adults, ["1..9"]
            )
        if self.infants > self.adults:
            raise fail(
                "infant_requires_adult",
                "every infant travels on an adult's lap",
                "infants",
                self.infants,
                [f"0..{self.adults}"],
            )
        if self.children and not self.adults:
            raise fail("child_requires_adult", "children travel with an adult", "adults", self.adults, ["1..9"])
        if self.adults + self.children > 9:
            raise fail(
                "too_many_passengers", "at most 9 seats per booking", "adults", self.adults, [f"1..{9 - self.children}"]
            )
        w: TravelWorld | None = ctx.get("travel")
        if w is not None:
            check_schedule(self, w)


def _seats_check(w: TravelWorld, number: str, fare: str, seats: int, field: str) -> None:
    f = w.flight(number)
    assert f is not None
    if fare not in f.fares:
        raise fail("fare_not_offered", "the flight does not sell this class", "fare_class", fare, list(f.fares))
    if f.fares[fare].seats < seats:
        with_room = [c for c, x in f.fares.items() if x.seats >= seats]
        if with_room:
            raise fail("not_enough_seats", "not enough seats left in this class", "fare_class", fare, with_room)
        same_day = [
            g.number
            for g in w.flights
            if (g.origin, g.destination, g.departs.date()) == (f.origin, f.destination, f.departs.date())
            and fare in g.fares
            and g.fares[fare].seats >= seats
        ]
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
        raise fail(
            "unknown_flight",
            "no such flight in the schedule",
            "return_flight_number",
            inp.return_flight_number,
            numbers,
        )
    reverse = [f for f in w.flights if (f.origin, f.destination) == (out.destination, out.origin)]
    if (back.origin, back.destination) != (out.destination, out.origin):
        raise fail(
            "return_route_mismatch",
            "the way back must fly the outbound route in reverse",
            "return_flight_number",
            back.number,
            [f.number for f in reverse if f.departs > out.arrives],
        )
    if back.departs <= out.arrives:
        raise fail(
            "return_before_departure",
            "the way back departs before the outbound flight arrives",
            "return_flight_number",
            back.number,
            [f.number for f in reverse if f.departs > out.arrives],
        )
    _seats_check(w, back.number, inp.fare_class, seats, "return_flight_number")


class BookingInput(ToolInput):
    booking_id: Annotated[str, normalised(normalize_booking)] = Field(
        description="Booking reference, three letters and three digits", pattern=r"^[A-Z]{3}\d{3}$"
    )

    def rules(self, ctx: dict[str, Any]) -> None:
        desk = ctx.get("desk")
        if desk is not None and self.booking_id not in desk.bookings:
            raise fail(
                "unknown_booking",
                "no booking with this reference",
                "booking_id",
                self.booking_id,
                sorted(desk.bookings),
            )


class CancelBookingInput(BookingInput):
    def rules(self, ctx: dict[str, Any]) -> None:
        super().rules(ctx)
        desk = ctx.get("desk")
        if desk is not None and desk.bookings[self.booking_id].status == "cancelled":
            active = sorted(k for k, b in desk.bookings.items() if b.status == "active")
            raise fail("booking_cancelled", "the booking is already cancelled", "booking_id", self.booking_id, active)
