"""The simulated calendar service: the principal's meetings and the rooms. The ground truth."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from envs.tools.calendar.contract import CancelMeetingInput, CreateMeetingInput, ListMeetingsInput, MoveMeetingInput
from envs.tools.calendar.world import CalendarWorld, Meeting, overlaps


def title_key(title: str) -> str:
    """Titles compare as people read them: case, quotes and spacing do not matter."""
    return " ".join(re.sub(r"[^\w\s:-]", " ", title.casefold().replace("ё", "е")).split())


class CalendarService:
    def __init__(self, world: CalendarWorld):
        self.world = world  # a fresh world per case: meetings change
        self.now = self.world.now
        self.meetings: list[Meeting] = self.world.meetings
        self.blocks = self.world.blocks
        self.made = 0

    def _row(self, m: Meeting, zone: str) -> dict[str, Any]:
        tz = ZoneInfo(zone)
        return {
            "meeting_id": m.meeting_id,
            "title": m.title,
            "start": m.start.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
            "end": m.end.astimezone(tz).strftime("%Y-%m-%d %H:%M"),
            "timezone": zone,
            "room": m.room,
            "attendees": m.attendees,
        }

    def list(self, inp: ListMeetingsInput) -> list[dict[str, Any]]:
        tz = ZoneInfo(inp.timezone)
        day0 = datetime.combine(inp.date, time(0), tzinfo=tz)
        day1 = day0 + timedelta(days=1)
        return [
            self._row(m, inp.timezone)
            for m in sorted(self.meetings, key=lambda m: m.start)
            if m.status == "active" and overlaps(day0, day1, m.start, m.end)
        ]

    def create(self, inp: CreateMeetingInput) -> dict[str, Any]:
        self.made += 1
        start = inp.instant()
        m = Meeting(
            meeting_id=f"mtg-N{self.made:03d}",
            title=inp.title,
            start=start,
            end=start + timedelta(minutes=inp.duration_min),
            room=inp.room,
            attendees=inp.attendees,
        )
        self.meetings.append(m)
        return self._row(m, inp.timezone)

    def move(self, inp: MoveMeetingInput) -> dict[str, Any]:
        m = next(x for x in self.meetings if x.meeting_id == inp.meeting_id)
        length = m.end - m.start
        m.start = inp.instant()
        m.end = m.start + length
        m.room = inp.room or m.room
        return self._row(m, inp.timezone)

    def cancel(self, inp: CancelMeetingInput) -> dict[str, Any]:
        m = next(x for x in self.meetings if x.meeting_id == inp.meeting_id)
        m.status = "cancelled"
        return {"meeting_id": m.meeting_id, "status": "cancelled"}

    def state(self) -> dict[str, Any]:
        return {
            f"meeting:{m.meeting_id}": (title_key(m.title), m.start.isoformat(), m.end.isoformat(), m.room, m.status)
            for m in self.meetings
        }
