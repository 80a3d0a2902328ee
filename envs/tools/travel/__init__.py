"""Travel domain of the tool suites: flights, seats, bookings."""

from envs.tools.travel.domain import TravelTools, build

__all__ = ["TravelTools", "build"]
