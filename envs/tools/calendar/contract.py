"""Input contracts of the calendar tools: wall-clock times in a named zone, rooms that exist,
and the overlap rules (the principal cannot be in two meetings; a room holds one booking)."""

from __future__ import annotations

import datetime as dt
import re
from typing import Annotated, Any
from zoneinfo import ZoneInfo

from pydantic import Field

from envs.tools.calendar.world import ROOMS, ZONES, Room, Zone, busy
from envs.tools.fields import Count, FutureDay, LocalDateTime, Minutes
from envs.tools.tooling import ToolInput
from envs.validation import fail, normalised

ZONE_ALIASES = {
    **{z.lower(): z for z in ZONES},
    **dict.fromkeys(
        ["мск", "msk", "москва", "по москве", "по московскому времени", "moscow", "moscow time", "utc+3", "gmt+3"],
        "Europe/Moscow",
    ),
    **dict.fromkeys(
        ["лондон", "по лондону", "по лондонскому времени", "london", "london time", "uk time"], "Europe/London"
    ),
    **dict.fromkeys(["берлин", "по берлину", "berlin", "berlin time", "cet", "cest"], "Europe/Berlin"),
    **dict.fromkeys(
        ["екб", "екатеринбург", "по екатеринбургу", "yekaterinburg", "utc+5", "gmt+5"], "Asia/Yekaterinburg"
    ),
    **dict.fromkeys(["новосибирск", "по новосибирску", "novosibirsk", "utc+7", "gmt+7"], "Asia/Novosibirsk"),
    **dict.fromkeys(
        ["нью-йорк", "нью йорк", "по нью-йорку", "new york", "new york time", "nyc", "et", "eastern time"],
        "America/New_York",
    ),
    **dict.fromkeys(["токио", "по токио", "tokyo", "tokyo time", "jst"], "Asia/Tokyo"),
    **dict.fromkeys(["дубай", "по дубаю", "dubai", "dubai time", "utc+4", "gmt+4"], "Asia/Dubai"),
    **dict.fromkeys(["utc", "gmt", "z", "utc+0"], "UTC"),
}
ROOM_ALIASES = {
    "нева": "Neva",
    "волга": "Volga",
    "урал": "Ural",
    "байкал": "Baikal",
    "амур": "Amur",
    "лена": "Lena",
    **{r.lower(): r for r in ROOMS},
}
_ROOM_WORDS = re.compile(r"^(?:переговорк[аеуи]|комнат[аеуы]|room|meeting room)\s+")


def normalize_zone(v: object) -> object:
    if not isinstance(v, str):
        return v
    key = " ".join(v.strip().lower().split())
    for candidate in (key, re.sub(r"^по\s+", "", key), re.sub(r"\s+time$", "", key)):
        if candidate in ZONE_ALIASES:
            return ZONE_ALIASES[candidate]
    return v.strip()


def normalize_room(v: object) -> object:
    if not isinstance(v, str):
        return v
    key = _ROOM_WORDS.sub("", " ".join(v.strip().lower().replace("«", "").replace("»", "").split()))
    return ROOM_ALIASES.get(key, v.strip())


def normalize_meeting(v: object) -> object:
    """'MTG-7f3a', 'mtg 7F3A', '7F3A' -> 'mtg-7F3A' (ids the tool itself printed, retyped)."""
    if not isinstance(v, str):
        return v
    m = re.match(r"^(?:mtg[\s_-]?)?([A-Za-z0-9]{4})$", v.strip(), re.IGNORECASE)
    return f"mtg-{m[1].upper()}" if m else v.strip()


def normalize_title(v: object) -> object:
    return v.strip().strip("«»\"'“”") if isinstance(v, str) else v


TimeZone = Annotated[Zone, normalised(normalize_zone)]
RoomName = Annotated[Room, normalised(normalize_room)]
MeetingId = Annotated[
    str, Field(description="Id of the meeting, as listed", pattern=r"^mtg-[A-Z0-9]{4}$"), normalised(normalize_meeting)
]


def local_iso(instant: dt.datetime, zone: str) -> str:
    return instant.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%dT%H:%M")


class Timed(ToolInput):
    """The shared part of create and move: a wall-clock start in a named zone."""

    start: LocalDateTime = Field(description="Start as local wall-clock time in `timezone`, YYYY-MM-DDTHH:MM")
    timezone: TimeZone = Field(description="IANA time zone of `start`")

    def instant(self) -> dt.datetime:
        """An explicit UTC offset in `start` wins over `timezone`."""
        start = self.start if self.start.tzinfo else self.start.replace(tzinfo=ZoneInfo(self.timezone))
        return start.astimezone(dt.UTC)


def check_slot(inp: Timed, ctx: dict[str, Any], duration: int, room: str, attendees: int, skip: str | None) -> None:
    """The after phase against the calendar: future start, capacity, free room, free principal."""
    if not 2000 <= inp.start.year <= 2100:  # before any arithmetic: year 9999 overflows
        raise fail(
            "start_out_of_range", "the start is not a plausible date", "start", inp.start.isoformat(), ["2000..2100"]
        )
    cal = ctx.get("calendar")
    if cal is None:
        return
    start = inp.instant()
    end = start + dt.timedelta(minutes=duration)
    if start <= cal.now:
        raise fail(
            "start_in_past",
            "the start is not in the future",
            "start",
            local_iso(start, inp.timezone),
            [f"> {local_iso(cal.now, inp.timezone)}"],
        )
    fits = [
        r for r, cap in ROOMS.items() if cap >= attendees and not busy(cal.meetings, cal.blocks, start, end, r, skip)
    ]
    if ROOMS[room] < attendees:
        raise fail("room_too_small", f"the room holds {ROOMS[room]} people", "room", room, fits)
    if busy(cal.meetings, cal.blocks, start, end, room, skip):
        raise fail("room_busy", "the room is taken at that time", "room", room, fits)
    if busy(cal.meetings, [], start, end, None, skip):
        raise fail(
            "calendar_conflict",
            "overlaps another meeting of the principal",
            "start",
            local_iso(start, inp.timezone),
            free_starts(cal, start, duration, inp.timezone, skip),
        )


def free_starts(cal: Any, start: dt.datetime, duration: int, zone: str, skip: str | None) -> list[str]:
    """Free starts of the same length on the same local day, 08:00-20:00 on the half hour."""
    day = start.astimezone(ZoneInfo(zone)).date()
    out = []
    for h in range(16, 40):
        s = dt.datetime.combine(day, dt.time(h // 2, 30 * (h % 2)), tzinfo=ZoneInfo(zone)).astimezone(dt.UTC)
        if s > cal.now and not busy(cal.meetings, [], s, s + dt.timedelta(minutes=duration), None, skip):
            out.append(local_iso(s, zone))
    return out[:12]


class CreateMeetingInput(Timed):
    title: Annotated[str, normalised(normalize_title)] = Field(
        min_length=1, max_length=120, description="Title of the meeting"
    )
    duration_min: Minutes = Field(ge=15, le=480, description="Length in minutes")
    room: RoomName = Field(description="Meeting room")
    attendees: Count = Field(1, ge=1, le=50, description="How many people attend, the principal included")

    def rules(self, ctx: dict[str, Any]) -> None:
        check_slot(self, ctx, self.duration_min, self.room, self.attendees, None)


def _meeting(v: object, ctx: dict[str, Any], field: str) -> Any:
    cal = ctx.get("calendar")
    if cal is None:
        return None
    found = next((m for m in cal.meetings if m.meeting_id == v), None)
    active = [m.meeting_id for m in cal.meetings if m.status == "active"]
    if found is None:
        raise fail("unknown_meeting", "no meeting with this id", field, v, active)
    if found.status != "active":
        raise fail("meeting_cancelled", "the meeting is cancelled", field, v, active)
    return found


class MoveMeetingInput(Timed):
    meeting_id: MeetingId
    room: RoomName | None = Field(None, description="New room; the current one when omitted")

    def rules(self, ctx: dict[str, Any]) -> None:
        m = _meeting(self.meeting_id, ctx, "meeting_id")
        if m is not None:
            minutes = int((m.end - m.start).total_seconds() // 60)
            check_slot(self, ctx, minutes, self.room or m.room, m.attendees, m.meeting_id)


class CancelMeetingInput(ToolInput):
    meeting_id: MeetingId

    def rules(self, ctx: dict[str, Any]) -> None:
        _meeting(self.meeting_id, ctx, "meeting_id")


class ListMeetingsInput(ToolInput):
    date: FutureDay = Field(description="The day, YYYY-MM-DD")
    timezone: TimeZone = Field(description="IANA time zone the day and the times are read in")
