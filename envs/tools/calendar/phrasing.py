"""How the principal asks for a meeting, slot by slot, in Russian or English."""

from __future__ import annotations

import random
from datetime import date, datetime
from zoneinfo import ZoneInfo

from envs.tools.calendar.world import CalendarWorld
from envs.tools.notation import EN_MONTH_NAMES, EN_ON_WEEKDAY, RU_MONTHS_GENITIVE, RU_ON_WEEKDAY
from envs.tools.slots import Correction, Customer

ROOM_RU = {"Neva": "Нева", "Volga": "Волга", "Ural": "Урал", "Baikal": "Байкал", "Amur": "Амур", "Lena": "Лена"}
ZONE_WORDS = {
    "Europe/Moscow": (["по Москве", "по московскому времени", "МСК"], ["Moscow time", "MSK"]),
    "Europe/London": (["по Лондону", "по лондонскому времени"], ["London time"]),
    "Europe/Berlin": (["по Берлину"], ["Berlin time"]),
    "Asia/Yekaterinburg": (["по Екатеринбургу", "по ЕКБ"], ["Yekaterinburg time"]),
    "Asia/Novosibirsk": (["по Новосибирску"], ["Novosibirsk time"]),
    "America/New_York": (["по Нью-Йорку"], ["New York time", "ET"]),
    "Asia/Tokyo": (["по Токио"], ["Tokyo time", "JST"]),
    "Asia/Dubai": (["по Дубаю"], ["Dubai time"]),
    "UTC": (["по UTC"], ["UTC"]),
}
DURATIONS = {
    30: (["на полчаса", "на 30 минут"], ["for half an hour", "for 30 min"]),
    45: (["на 45 минут", "на 45 мин"], ["for 45 minutes", "for 45 min"]),
    60: (["на час", "на 1 час", "на 60 минут"], ["for an hour", "for 1 h", "for 60 minutes"]),
    90: (["на полтора часа", "на 1,5 часа", "на 90 минут"], ["for an hour and a half", "for 1.5 hours", "for 90 min"]),
}
WORDS: dict[str, tuple[str, ...]] = {
    "time": ("когда", "время", "во сколько", "дат", "день", "when", "time", "what day", "which day", "date"),
    "duration": ("долг", "длительн", "на сколько", "сколько времени", "how long", "duration", "length"),
    "room": (
        "переговор",
        "комнат",
        "сколько человек",
        "участник",
        "room",
        "where",
        "how many people",
        "attendees",
        "participants",
    ),
    "meeting": ("какую", "какая", "назван", "which meeting", "which one", "title", "name"),
}


def _day(rng: random.Random, d: date, today: date, ru: bool) -> str:
    delta = (d - today).days
    forms = [
        d.strftime("%d.%m"),
        f"{d.day} {RU_MONTHS_GENITIVE[d.month - 1]}" if ru else f"{EN_MONTH_NAMES[d.month - 1]} {d.day}",
    ]
    if delta == 1:
        forms.append("завтра" if ru else "tomorrow")
    elif delta == 2 and ru:
        forms.append("послезавтра")
    if 1 < delta < 7:
        forms.append((RU_ON_WEEKDAY if ru else EN_ON_WEEKDAY)[d.weekday()])
    return rng.choice(forms)


def _clock(rng: random.Random, t: datetime, ru: bool) -> str:
    if ru or rng.random() < 0.5:
        return t.strftime("%H:%M")
    h12 = t.hour % 12 or 12
    mark = "am" if t.hour < 12 else "pm"
    return f"{h12}{mark}" if t.minute == 0 else f"{h12}:{t.minute:02d} {mark}"


def _when(w: CalendarWorld, rng: random.Random, instant: datetime, ru: bool) -> str:
    local = instant.astimezone(ZoneInfo(w.zone))
    day = _day(rng, local.date(), w.today, ru)
    zone = "" if w.zone == w.home and rng.random() < 0.6 else " " + rng.choice(ZONE_WORDS[w.zone][0 if ru else 1])
    if ru:
        return f"{day} в {_clock(rng, local, ru)}{zone}"
    lead = "" if day.startswith("on ") or day == "tomorrow" else "on "
    return f"{lead}{day} at {_clock(rng, local, ru)}{zone}"


def customer(w: CalendarWorld) -> tuple[Customer, str]:
    rng = random.Random(w.seed * 7919 + 41)
    ru = w.lang == "ru"
    target = next((m for m in w.meetings if m.meeting_id == w.target), None)
    phrases: dict[str, str] = {}
    q = ("«", "»") if ru else ("“", "”")
    title = f"{q[0]}{w.title}{q[1]}"
    if target is not None:
        old = _day(rng, target.start.astimezone(ZoneInfo(w.home)).date(), w.today, ru)
        phrases["meeting"] = f"{title} {old}"
    said = w.said_start or w.start
    phrases["time"] = _when(w, rng, said, ru)
    phrases["duration"] = rng.choice(DURATIONS[w.duration][0 if ru else 1])
    room = ROOM_RU[w.room] if ru and rng.random() < 0.6 else w.room
    phrases["room"] = (
        f"в переговорке {room}, нас будет {w.attendees}" if ru else f"in room {room}, {w.attendees} people"
    )
    correction = None
    if w.said_start is not None:
        right = w.start.astimezone(ZoneInfo(w.zone))
        message = f"ой, нет, время другое: в {right:%H:%M}" if ru else f"sorry, wrong time: make it {right:%H:%M}"
        h12 = right.hour % 12 or 12
        correction = Correction(
            slot="time",
            message=message,
            value=f"{right:%H:%M}",
            value_words=(f"{right:%H:%M}", f"{right.hour}:{right:%M}", f"{h12}pm" if right.hour >= 12 else f"{h12}am"),
        )
    slots = {"create": ["time", "duration", "room"], "move": ["time"], "cancel": ["meeting"]}[w.kind]
    opening = [s for s in slots if s not in w.withheld]
    if w.kind == "create":
        intent = f"Поставь встречу {title}." if ru else f"Please set up a meeting {title}."
    elif w.kind == "move":
        intent = f"Перенеси {phrases['meeting']}." if ru else f"Please move {phrases['meeting']}."
        phrases["time"] = ("на " if ru else "to ") + phrases["time"]
    elif opening:  # cancel, with the meeting named at once
        intent = f"Отмени, пожалуйста, {phrases['meeting']}." if ru else f"Please cancel {phrases['meeting']}."
        opening = []
    else:
        intent = "Отмени, пожалуйста, встречу." if ru else "Please cancel a meeting."
    c = Customer(
        lang=w.lang, phrases=phrases, opening=opening, withheld=list(w.withheld), words=WORDS, correction=correction
    )
    return c, " ".join([intent] + [phrases[s][0].upper() + phrases[s][1:] + "." for s in opening])
