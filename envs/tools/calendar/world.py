"""A scheduling task: the principal's calendar, the office's rooms and their other bookings."""

from __future__ import annotations

import random
import string
from datetime import UTC, date, datetime, time, timedelta
from typing import Literal, get_args
from zoneinfo import ZoneInfo

from pydantic import BaseModel

Zone = Literal[
    "Europe/Moscow",
    "Europe/London",
    "Europe/Berlin",
    "Asia/Yekaterinburg",
    "Asia/Novosibirsk",
    "America/New_York",
    "Asia/Tokyo",
    "Asia/Dubai",
    "UTC",
]
# read off the type, so that the zones a tool accepts and those a task draws from (in this order) agree
ZONES: tuple[str, ...] = get_args(Zone)
Room = Literal["Neva", "Volga", "Ural", "Baikal", "Amur", "Lena"]
ROOMS: dict[str, int] = {"Neva": 4, "Volga": 6, "Ural": 8, "Baikal": 10, "Amur": 12, "Lena": 20}
HOME_ZONES = ("Europe/Moscow", "Europe/Berlin", "Asia/Yekaterinburg")
TITLES = {
    "ru": [
        "Планёрка",
        "Ревью бюджета",
        "Синк по релизу",
        "Собеседование",
        "Встреча с Анной",
        "Демо для клиента",
        "Разбор инцидента",
        "Планирование спринта",
        "Созвон с подрядчиком",
        "Ретро",
    ],
    "en": [
        "Budget review",
        "Release sync",
        "Interview",
        "Catch-up with John",
        "Client demo",
        "Incident review",
        "Sprint planning",
        "Vendor call",
        "Retro",
        "Staff meeting",
    ],
}
Kind = Literal["create", "move", "cancel"]
SLOT_SHARE = 0.4
CORRECTION_SHARE = 0.6  # only create tasks that name the time at once can carry one


class Meeting(BaseModel):
    meeting_id: str
    title: str
    start: datetime  # aware, UTC
    end: datetime
    room: str
    attendees: int
    status: Literal["active", "cancelled"] = "active"


class Block(BaseModel):
    """Another team's booking of a room: not in the principal's calendar, but the room is taken."""

    room: str
    start: datetime
    end: datetime


class CalendarWorld(BaseModel):
    seed: int
    lang: Literal["ru", "en"]
    home: str
    now: datetime  # aware, in the home zone
    kind: Kind
    dialogue: Literal["single", "slots"]
    meetings: list[Meeting]
    blocks: list[Block]
    title: str
    start: datetime  # the wished start, aware UTC (create, move)
    zone: str  # the zone the person speaks in
    duration: int
    room: str
    attendees: int
    target: str | None  # meeting to move or cancel
    withheld: list[str]
    said_start: datetime | None  # the time first said, before the person corrects it

    @property
    def today(self) -> date:
        return self.now.date()


def overlaps(a0: datetime, a1: datetime, b0: datetime, b1: datetime) -> bool:
    return a0 < b1 and b0 < a1


def busy(
    meetings: list[Meeting],
    blocks: list[Block],
    start: datetime,
    end: datetime,
    room: str | None,
    skip: str | None = None,
) -> bool:
    """Whether the principal (room None) or the room is taken in [start, end)."""
    for m in meetings:
        if (
            m.status == "active"
            and m.meeting_id != skip
            and overlaps(start, end, m.start, m.end)
            and (room is None or m.room == room)
        ):
            return True
    return room is not None and any(b.room == room and overlaps(start, end, b.start, b.end) for b in blocks)


def _at(day: date, half_hours: int, zone: str) -> datetime:
    local = datetime.combine(day, time(half_hours // 2, 30 * (half_hours % 2)), tzinfo=ZoneInfo(zone))
    return local.astimezone(UTC)


def _calendar(rng: random.Random, home: str, today: date, titles: list[str]) -> tuple[list[Meeting], list[Block]]:
    meetings: list[Meeting] = []
    blocks: list[Block] = []
    for d in range(1, 8):
        day = today + timedelta(days=d)
        for _ in range(rng.randint(1, 3)):
            start = _at(day, rng.randint(18, 35), home)
            end = start + timedelta(minutes=rng.choice([30, 60, 90]))
            room = rng.choice(list(ROOMS))
            if busy(meetings, blocks, start, end, None) or busy(meetings, blocks, start, end, room) or not titles:
                continue
            mid = "mtg-" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=4))
            meetings.append(
                Meeting(
                    meeting_id=mid,
                    title=titles.pop(),
                    start=start,
                    end=end,
                    room=room,
                    attendees=rng.randint(2, ROOMS[room]),
                )
            )
        for _ in range(rng.randint(2, 4)):
            start = _at(day, rng.randint(18, 35), home)
            blocks.append(
                Block(
                    room=rng.choice(list(ROOMS)), start=start, end=start + timedelta(minutes=rng.choice([60, 90, 120]))
                )
            )
    return meetings, blocks


def _free_start(
    rng: random.Random,
    home: str,
    meetings: list[Meeting],
    blocks: list[Block],
    day: date,
    duration: int,
    room: str,
    skip: str | None,
) -> datetime | None:
    slots = list(range(18, 36))  # 09:00 .. 17:30 in the home zone
    rng.shuffle(slots)
    for h in slots:
        start = _at(day, h, home)
        end = start + timedelta(minutes=duration)
        if not busy(meetings, blocks, start, end, None, skip) and not busy(meetings, blocks, start, end, room, skip):
            return start
    return None


def make_calendar_world(seed: int) -> CalendarWorld:
    rng = random.Random(seed)
    lang: Literal["ru", "en"] = "ru" if rng.random() < 0.6 else "en"
    home = rng.choice(HOME_ZONES)
    today = date(2026, 2, 2) + timedelta(days=rng.randint(0, 280))
    now = datetime.combine(today, time(8 + rng.randint(0, 1), 30 * rng.randint(0, 1)), tzinfo=ZoneInfo(home))
    titles = rng.sample(TITLES[lang], len(TITLES[lang]))
    meetings, blocks = _calendar(rng, home, today, titles)
    u = rng.random()
    kind: Kind = "create" if u < 0.45 or not meetings else "move" if u < 0.8 else "cancel"
    target = rng.choice(meetings) if kind != "create" else None
    title = target.title if target else titles.pop() if titles else "Sync"
    duration = int((target.end - target.start).total_seconds() // 60) if target else rng.choice([30, 45, 60, 90])
    room = target.room if target else rng.choice(list(ROOMS))
    attendees = target.attendees if target else rng.randint(2, ROOMS[room])
    start = None
    while start is None:  # a day where the person and the room are both free
        day = today + timedelta(days=rng.randint(1, 6))
        start = _free_start(rng, home, meetings, blocks, day, duration, room, target.meeting_id if target else None)
    zone = home if rng.random() < 0.6 else rng.choice([z for z in ZONES if z != home])
    dialogue: Literal["single", "slots"] = "slots" if rng.random() < SLOT_SHARE else "single"
    slots = {"create": ["time", "duration", "room"], "move": ["time"], "cancel": ["meeting"]}[kind]
    withheld = sorted(rng.sample(slots, rng.randint(1, len(slots))), key=slots.index) if dialogue == "slots" else []
    said = None
    if dialogue == "slots" and kind == "create" and "time" not in withheld and rng.random() < CORRECTION_SHARE:
        said = start + timedelta(hours=rng.choice([-1, 1]))
    return CalendarWorld(
        seed=seed,
        lang=lang,
        home=home,
        now=now,
        kind=kind,
        dialogue=dialogue,
        meetings=meetings,
        blocks=blocks,
        title=title,
        start=start,
        zone=zone,
        duration=duration,
        room=room,
        attendees=attendees,
        target=target.meeting_id if target else None,
        withheld=withheld,
        said_start=said,
    )
