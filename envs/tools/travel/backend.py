"""The simulated booking desk: schedule, seats, bookings. Its state is the ground truth."""

from __future__ import annotations

from typing import Any

from envs.tools.travel.contract import BookFlightInput, BookingInput, CancelBookingInput, SearchFlightsInput
from envs.tools.travel.world import Booking, Flight, TravelWorld


def _flight_row(f: Flight) -> dict[str, Any]:
    return {
        "flight_number": f.number,
        "origin": f.origin,
        "destination": f.destination,
        "departs": f.departs.strftime("%Y-%m-%d %H:%M"),
        "arrives": f.arrives.strftime("%Y-%m-%d %H:%M"),
        "fares": {c: {"seats_left": x.seats, "price_rub": x.price} for c, x in f.fares.items()},
    }


class Desk:
    def __init__(self, world: TravelWorld):
        self.world = world  # a fresh world per case: seats change as bookings are made
        self.bookings: dict[str, Booking] = {b.booking_id: b for b in self.world.bookings}
        self.made = 0

    def search(self, inp: SearchFlightsInput) -> list[dict[str, Any]]:
        return [
            _flight_row(f)
            for f in self.world.flights
            if (f.origin, f.destination, f.departs.date()) == (inp.origin, inp.destination, inp.date)
        ]

    def book(self, inp: BookFlightInput) -> dict[str, Any]:
        self.made += 1
        booking = Booking(
            booking_id=f"BKN{self.made:03d}",
            flight=inp.flight_number,
            return_flight=inp.return_flight_number,
            fare_class=inp.fare_class,
            adults=inp.adults,
            children=inp.children,
            infants=inp.infants,
        )
        self.bookings[booking.booking_id] = booking
        for number in filter(None, [inp.flight_number, inp.return_flight_number]):
            flight = self.world.flight(number)
            assert flight is not None
            flight.fares[inp.fare_class].seats -= inp.adults + inp.children
        return {"booking_id": booking.booking_id, "status": "confirmed"}

    def get(self, inp: BookingInput) -> dict[str, Any]:
        return self.bookings[inp.booking_id].model_dump()

    def cancel(self, inp: CancelBookingInput) -> dict[str, Any]:
        self.bookings[inp.booking_id].status = "cancelled"
        return {"booking_id": inp.booking_id, "status": "cancelled"}

    def state(self) -> dict[str, Any]:
        return {f"booking:{k}": tuple(b.model_dump(exclude={"booking_id"}).values()) for k, b in self.bookings.items()}
