"""Suite `tools-travel`: search and book flights, look up and cancel bookings."""

from __future__ import annotations

from envs.contract import ToolCall
from envs.tools.case import Case, domain_case, today_line
from envs.tools.suite import ToolsSuite
from envs.tools.tooling import Tool
from envs.tools.travel.backend import Desk
from envs.tools.travel.contract import BookFlightInput, BookingInput, CancelBookingInput, SearchFlightsInput
from envs.tools.travel.phrasing import customer
from envs.tools.travel.world import AIRPORTS, FARES, TravelWorld, make_travel_world

SYSTEM = (
    "You are a booking agent of an airline ticket office, chatting with a customer. You act only through the "
    "tools you are given; a reply without a tool call is sent to the customer. If you need something the "
    "customer has not told you, ask them. Flight times are local to the departure airport. A return trip is "
    "one booking with both flights."
)


def _allowed(desk: Desk, field: str) -> list[str]:
    if field in {"origin", "destination"}:
        return list(AIRPORTS)
    if field in {"flight_number", "return_flight_number"}:
        return [f.number for f in desk.world.flights]
    if field == "fare_class":
        return list(FARES)
    if field == "booking_id":
        return sorted(desk.bookings)
    if field in {"adults", "children", "infants"}:
        return ["0..9"]
    return []


def tools(desk: Desk) -> list[Tool]:
    def allowed(f: str) -> list[str]:
        return _allowed(desk, f)

    def numbers() -> list[str]:
        return [f.number for f in desk.world.flights]

    return [
        Tool(
            "search_flights",
            "Find flights on one day between two airports, with seats left and prices per class.",
            SearchFlightsInput,
            desk.search,
            allowed_for=allowed,
            enums=lambda: {"origin": list(AIRPORTS), "destination": list(AIRPORTS)},
        ),
        Tool(
            "book_flight",
            "Book seats on a flight, or on a flight and its way back.",
            BookFlightInput,
            desk.book,
            write=True,
            slots={
                "flight_number": ("date",),
                "return_flight_number": ("return",),
                "fare_class": ("fare",),
                "adults": ("passengers",),
                "children": ("passengers",),
                "infants": ("passengers",),
            },
            allowed_for=allowed,
            enums=lambda: {"flight_number": numbers(), "return_flight_number": numbers()},
        ),
        Tool(
            "get_booking",
            "Look up a booking by its reference.",
            BookingInput,
            desk.get,
            allowed_for=allowed,
            enums=lambda: {"booking_id": sorted(desk.bookings)},
        ),
        Tool(
            "cancel_booking",
            "Cancel a booking.",
            CancelBookingInput,
            desk.cancel,
            write=True,
            slots={"booking_id": ("booking",)},
            allowed_for=allowed,
            enums=lambda: {"booking_id": sorted(desk.bookings)},
        ),
    ]


def gold_calls(w: TravelWorld) -> list[ToolCall]:
    if w.kind == "cancel":
        return [ToolCall(name="cancel_booking", arguments={"booking_id": w.cancel_id})]
    args = {
        "flight_number": w.gold_flight,
        "fare_class": w.fare,
        "adults": w.adults,
        "children": w.children,
        "infants": w.infants,
    }
    if w.gold_return:
        args["return_flight_number"] = w.gold_return
    return [ToolCall(name="book_flight", arguments=args)]


def build(seed: int) -> Case:
    w = make_travel_world(seed)
    desk = Desk(w)
    return domain_case(
        "travel",
        w,
        SYSTEM,
        today_line(w.today),
        customer(w),
        tools=tools(desk),
        context={"today": w.today, "travel": desk.world, "desk": desk},
        state=desk.state,
        gold_calls=gold_calls(w),
    )


class TravelTools(ToolsSuite):
    name = "tools-travel"
    prefix = "travel"
    seed_base = 7_200_000
    build = staticmethod(build)
