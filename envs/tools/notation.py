"""Before-phase normalisers shared by the tool domains: human notation in Russian and English.

Each takes the raw value the model sent and returns either the canonical form or the input
unchanged (stripped), so the core types reject what could not be read and the error carries
the observed value. Reference dates always come from the task, never from the clock.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Literal

Direction = Literal["past", "future"]

RELATIVE = {
    "сегодня": 0,
    "today": 0,
    "вчера": -1,
    "yesterday": -1,
    "позавчера": -2,
    "day before yesterday": -2,
    "завтра": 1,
    "tomorrow": 1,
    "послезавтра": 2,
    "day after tomorrow": 2,
}
# The months and weekdays as the simulated customers write them (each domain's phrasing) and as
# the normalisers below read them back: one list each, so that what is written can be read.
# "12 марта": a day of the month takes the month in the genitive
RU_MONTHS_GENITIVE = [
    "января",
    "февраля",
    "марта",
    "апреля",
    "мая",
    "июня",
    "июля",
    "августа",
    "сентября",
    "октября",
    "ноября",
    "декабря",
]
EN_MONTH_NAMES = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
EN_MONTH_ABBREVIATIONS = [m[:3] for m in EN_MONTH_NAMES]  # "Jan"
# "on Tuesday": Russian takes в/во and the accusative
RU_ON_WEEKDAY = ["в понедельник", "во вторник", "в среду", "в четверг", "в пятницу", "в субботу", "в воскресенье"]
EN_WEEKDAY_NAMES = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
EN_ON_WEEKDAY = [f"on {d}" for d in EN_WEEKDAY_NAMES]
# stems: "марта", "март", "мар" all start with "мар"; May/"мая"/"май" need the whole stem
RU_MONTH_STEMS = ["янв", "фев", "мар", "апр", "ма", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"]
EN_MONTH_STEMS = [m.lower() for m in EN_MONTH_ABBREVIATIONS]
WEEKDAYS = {
    **{w: i for i, w in enumerate(["понедельник", "вторник", "сред", "четверг", "пятниц", "суббот", "воскресенье"])},
    **{w.lower(): i for i, w in enumerate(EN_WEEKDAY_NAMES)},
    **{w[:3].lower(): i for i, w in enumerate(EN_WEEKDAY_NAMES)},
}
NUMBER_WORDS = {
    "ноль": 0,
    "zero": 0,
    "none": 0,
    "no": 0,
    "нет": 0,
    "один": 1,
    "одна": 1,
    "одного": 1,
    "одну": 1,
    "one": 1,
    "a": 1,
    "an": 1,
    "два": 2,
    "две": 2,
    "двое": 2,
    "двух": 2,
    "two": 2,
    "три": 3,
    "трое": 3,
    "трёх": 3,
    "троих": 3,
    "three": 3,
    "четыре": 4,
    "четверо": 4,
    "four": 4,
    "пять": 5,
    "пятеро": 5,
    "five": 5,
    "шесть": 6,
    "шестеро": 6,
    "six": 6,
    "семь": 7,
    "seven": 7,
    "восемь": 8,
    "eight": 8,
    "девять": 9,
    "nine": 9,
}
_CONNECTIVES = {"в", "во", "на", "at", "on", "the"}
_FILLER = re.compile(r"^(?:on|at|for|the|в|во|на|к)\s+")
SPOKEN_MINUTES = {
    "полчаса": 30,
    "half an hour": 30,
    "час": 60,
    "1 час": 60,
    "an hour": 60,
    "one hour": 60,
    "полтора часа": 90,
    "an hour and a half": 90,
    "one and a half hours": 90,
    "два часа": 120,
    "two hours": 120,
}
_DOTTED = re.compile(r"^(\d{1,2})[./](\d{1,2})(?:[./](\d{2,4}))?$")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DAY_MONTH = re.compile(r"^(\d{1,2})\s+([a-zа-яё]+)\.?(?:\s+(\d{4}))?$")
_MONTH_DAY = re.compile(r"^([a-z]+)\.?\s+(\d{1,2})(?:st|nd|rd|th)?(?:,?\s+(\d{4}))?$")
_TIME = re.compile(r"(?<![\d.])(\d{1,2})(?::(\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|ч\b|часов|часа|час)?(?![\d.])")


def _key(v: str) -> str:
    key = " ".join(v.strip().lower().replace("ё", "е").split()).strip(".,!")
    return _FILLER.sub("", key)


def month_number(word: str) -> int | None:
    w = word.lower().replace("ё", "е")
    if w.startswith(("май", "мая")):
        return 5
    for i, stem in enumerate(RU_MONTH_STEMS):
        if stem != "ма" and w.startswith(stem):
            return i + 1
    for i, stem in enumerate(EN_MONTH_STEMS):
        if w.startswith(stem):
            return i + 1
    return None


def _with_year(day: int, month: int, year: int | None, today: date, direction: Direction) -> date | None:
    try:
        if year is not None:
            return date(year, month, day)
        d = date(today.year, month, day)
    except ValueError:
        return None
    if direction == "future" and d < today:
        return d.replace(year=today.year + 1)
    if direction == "past" and d > today:
        return d.replace(year=today.year - 1)
    return d


def _weekday(key: str, today: date, direction: Direction) -> date | None:
    words = key.split()
    for word in words[-1:]:
        for stem, idx in WEEKDAYS.items():
            if word.startswith(stem) and (len(stem) > 3 or word == stem):
                if direction == "future":
                    return today + timedelta(days=(idx - today.weekday() - 1) % 7 + 1)
                return today - timedelta(days=(today.weekday() - idx - 1) % 7 + 1)
    return None


def parse_day(v: str, today: date, direction: Direction) -> date | None:
    """A calendar day from human notation, or None when it cannot be read."""
    key = _key(v)
    if key in RELATIVE:
        return today + timedelta(days=RELATIVE[key])
    if _ISO.match(key):
        try:
            return date.fromisoformat(key)
        except ValueError:
            return None
    m = _DOTTED.match(key)
    if m:
        year = None if m[3] is None else int(m[3]) + (2000 if len(m[3]) == 2 else 0)
        return _with_year(int(m[1]), int(m[2]), year, today, direction)
    m = _DAY_MONTH.match(key)
    if m and month_number(m[2]):
        return _with_year(int(m[1]), month_number(m[2]) or 0, int(m[3]) if m[3] else None, today, direction)
    m = _MONTH_DAY.match(key)
    if m and month_number(m[1]):
        return _with_year(int(m[2]), month_number(m[1]) or 0, int(m[3]) if m[3] else None, today, direction)
    return _weekday(key, today, direction)


def normalize_day(v: object, today: date, direction: Direction) -> object:
    if not isinstance(v, str):
        return v
    day = parse_day(v, today, direction)
    return day if day is not None else v.strip()


def _find_time(v: str) -> re.Match[str] | None:
    """The first clock-like token: it has minutes or a marker (a bare '12' may be a day)."""
    return next((m for m in _TIME.finditer(v.lower()) if m.group(2) or m.group(3)), None)


def parse_time(v: str) -> tuple[int, int] | None:
    m = _find_time(v)
    if not m:
        return None
    hour, minute, mark = int(m[1]), int(m[2] or 0), (m[3] or "").replace(".", "")
    if mark in {"am", "pm"}:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if mark == "pm" else 0)
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return hour, minute


def normalize_local_datetime(v: object, today: date) -> object:
    """'завтра в 15:00', '12.03 3pm', 'Thursday 11:00' -> 'YYYY-MM-DDTHH:MM' (wall clock, no zone)."""
    if not isinstance(v, str):
        return v
    raw = v.strip()
    if re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?$", raw):
        return raw
    m = _find_time(raw)
    clock = parse_time(raw)
    if m is None or clock is None:
        return raw
    rest = (raw[: m.start()] + " " + raw[m.end() :]).replace(",", " ")
    rest = " ".join(w for w in rest.split() if w.lower() not in _CONNECTIVES)
    day = parse_day(rest, today, "future")
    if day is None:
        return raw
    return f"{day.isoformat()}T{clock[0]:02d}:{clock[1]:02d}"


def normalize_minutes(v: object) -> object:
    """'1 час', '90 min', '1,5 h', '1h30', 'полчаса' -> minutes."""
    if not isinstance(v, str):
        return v
    key = _key(v).replace(",", ".")
    if key in SPOKEN_MINUTES:
        return SPOKEN_MINUTES[key]
    m = re.match(r"^(\d{1,2}):(\d{2})$", key) or re.match(r"^(\d{1,2})\s*(?:h|ч)\s*(\d{1,2})\s*(?:m|min|мин)?$", key)
    if m:
        return int(m[1]) * 60 + int(m[2])
    m = re.match(r"^(\d+(?:\.\d+)?)\s*([a-zа-я]*)\.?$", key)
    if not m:
        return v.strip()
    number, unit = float(m[1]), m[2]
    if unit.startswith(("h", "ч")) and not unit.startswith("hr_"):
        return round(number * 60) if (number * 60).is_integer() else v.strip()
    if unit == "" or unit.startswith(("m", "мин")):
        return int(number) if number.is_integer() else v.strip()
    return v.strip()


def normalize_seconds(v: object) -> object:
    """'30s', '30 секунд', '2 min' -> seconds."""
    if not isinstance(v, str):
        return v
    key = _key(v).replace(",", ".")
    m = re.match(r"^(\d+)\s*([a-zа-я]*)\.?$", key)
    if not m:
        return v.strip()
    number, unit = int(m[1]), m[2]
    if unit.startswith(("m", "мин")):
        return number * 60
    if unit == "" or unit.startswith(("s", "сек", "с")):
        return number
    return v.strip()


def normalize_count(v: object) -> object:
    """'двое', 'two', '2 adults' -> 2."""
    if not isinstance(v, str):
        return v
    key = _key(v)
    digits = re.match(r"^(\d+)\b", key)
    if digits:
        return int(digits[1])
    first = key.split()[0] if key else key
    return NUMBER_WORDS.get(first, v.strip())


def normalize_choice(v: object, aliases: dict[str, str]) -> object:
    """Enum values in any case, with a few synonyms people type ('Эконом' -> 'economy')."""
    if not isinstance(v, str):
        return v
    key = _key(v).replace("-", " ").replace("_", " ")
    if key in aliases:
        return aliases[key]
    return aliases.get(key.replace(" ", "_"), key.replace(" ", "_"))
