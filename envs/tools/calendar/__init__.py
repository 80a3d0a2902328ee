"""Calendar domain of the tool suites: meetings, rooms, time zones."""

from envs.tools.calendar.domain import CalendarTools, build

__all__ = ["CalendarTools", "build"]
