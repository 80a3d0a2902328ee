"""How the travel customer writes, slot by slot, in Russian or English."""

from __future__ import annotations

import random
from datetime import date

from envs.tools.notation import EN_MONTH_ABBREVIATIONS, EN_ON_WEEKDAY, RU_MONTHS_GENITIVE, RU_ON_WEEKDAY
from envs.tools.slots import Correction, Customer, Lang
from envs.tools.travel.world import AIRPORTS, TravelWorld

WORDS: dict[str, tuple[str, ...]] = {
    "date": ("дат", "когда", "числ", "какой день", "вылет", "date", "when", "which day", "depart"),
    "return": ("обратно", "возвращ", "обратн", "return", "back"),
    "passengers": (
        "сколько",
        "пассажир",
        "человек",
        "взросл",
        "дет",
        "кто лет",
        "passenger",
        "how many",
        "people",
        "adult",
        "travell",
    ),
    "fare": ("класс", "тариф", "эконом", "бизнес", "class", "fare", "cabin", "economy", "business"),
    "booking": ("номер", "бронь", "брони", "бронирован", "reference", "booking", "number", "pnr"),
}
RU_ADULTS = {1: ["один взрослый", "1 взрослый"], 2: ["двое взрослых", "2 взрослых"], 3: ["трое взрослых", "3 взрослых"]}
EN_ADULTS = {1: ["one adult", "1 adult"], 2: ["two adults", "2 adults"], 3: ["three adults", "3 adults"]}
FARE_WORDS = {
    "ru": {
        "economy": ["эконом", "Эконом", "эконом-класс"],
        "premium": ["комфорт", "премиум-эконом"],
        "business": ["бизнес", "Бизнес", "бизнес-класс"],
    },
    "en": {
        "economy": ["economy", "Economy class", "ECONOMY"],
        "premium": ["premium economy", "Premium"],
        "business": ["business", "Business class"],
    },
}


def _day(rng: random.Random, d: date, today: date, ru: bool) -> str:
    forms = [d.strftime("%d.%m"), d.strftime("%d.%m.%Y")]
    forms.append(
        f"{d.day} {RU_MONTHS_GENITIVE[d.month - 1]}"
        if ru
        else rng.choice(
            [f"{EN_MONTH_ABBREVIATIONS[d.month - 1]} {d.day}", f"{d.day} {EN_MONTH_ABBREVIATIONS[d.month - 1]}"]
        )
    )
    if 1 < (d - today).days < 7:
        forms.append((RU_ON_WEEKDAY if ru else EN_ON_WEEKDAY)[d.weekday()])
    return rng.choice(forms)


def _city(rng: random.Random, code: str, case: int, ru: bool) -> str:
    names = AIRPORTS[code]
    if ru:
        return "Питер" if code == "LED" and case != 1 and rng.random() < 0.4 else names[case]
    return rng.choice([names[3], f"{names[3]} ({code})", code])


def _flight(rng: random.Random, number: str) -> str:
    return rng.choice([number, f"{number[:2].lower()} {number[2:]}", f"{number[:2]}-{number[2:]}"])


def _passengers(rng: random.Random, adults: int, children: int, infants: int, ru: bool) -> str:
    parts = [rng.choice((RU_ADULTS if ru else EN_ADULTS)[adults])]
    if children:
        parts.append(({1: "ребёнок", 2: "двое детей"} if ru else {1: "one child", 2: "two children"})[children])
    if infants:
        parts.append("младенец до двух лет" if ru else "an infant under 2")
    joined = ", ".join(parts[:-1]) + (" и " if ru else " and ") + parts[-1] if len(parts) > 1 else parts[0]
    return f"летим: {joined}" if ru else f"we are {joined}"


def _which(w: TravelWorld, rng: random.Random, number: str | None, ru: bool) -> str:
    if w.criterion == "number" and number:
        return f"рейсом {_flight(rng, number)}" if ru else f"on flight {_flight(rng, number)}"
    if w.criterion == "earliest":
        return "самым ранним рейсом" if ru else "on the earliest flight"
    return "самым дешёвым рейсом" if ru else "on the cheapest flight"


def customer(w: TravelWorld) -> tuple[Customer, str]:
    rng = random.Random(w.seed * 7919 + 29)
    ru = rng.random() < 0.6
    lang: Lang = "ru" if ru else "en"
    phrases: dict[str, str] = {}
    if w.kind == "cancel":
        ref = rng.choice(
            [w.cancel_id or "", f"{(w.cancel_id or '')[:3].lower()} {(w.cancel_id or '')[3:]}", f"№{w.cancel_id}"]
        )
        phrases["booking"] = f"номер брони {ref}" if ru else f"the booking reference is {ref}"
        intent = "Здравствуйте, отмените, пожалуйста, мою бронь." if ru else "Hello, please cancel my booking."
    else:
        src, dst = _city(rng, w.origin, 1, ru), _city(rng, w.destination, 2, ru)
        intent = f"Здравствуйте, нужны билеты из {src} в {dst}." if ru else f"Hi, I need flights from {src} to {dst}."
        phrases["date"] = (
            f"вылет {_day(rng, w.out_day, w.today, ru)}, {_which(w, rng, w.gold_flight, ru)}"
            if ru
            else f"departing {_day(rng, w.out_day, w.today, ru)}, {_which(w, rng, w.gold_flight, ru)}"
        )
        if w.back_day is not None:
            phrases["return"] = (
                f"обратно {_day(rng, w.back_day, w.today, ru)}, {_which(w, rng, w.gold_return, ru)}"
                if ru
                else f"coming back {_day(rng, w.back_day, w.today, ru)}, {_which(w, rng, w.gold_return, ru)}"
            )
        said = w.said_adults if w.said_adults is not None else w.adults
        phrases["passengers"] = _passengers(rng, said, w.children, w.infants, ru)
        fare = rng.choice(FARE_WORDS[lang][w.fare])
        phrases["fare"] = (fare if "класс" in fare else f"класс {fare}") if ru else f"{fare}, please"
    correction = None
    if w.said_adults is not None:
        right = _passengers(rng, w.adults, w.children, w.infants, ru)
        message = f"ой, поправка: {right}" if ru else f"oh, a correction: {right}"
        correction = Correction(
            slot="passengers", message=message, value=right, value_words=tuple({**RU_ADULTS, **EN_ADULTS}[w.adults])
        )
    order = (
        ["booking"]
        if w.kind == "cancel"
        else ["date", "return", "passengers", "fare"]
        if w.back_day
        else ["date", "passengers", "fare"]
    )
    opening = [s for s in order if s not in w.withheld]
    c = Customer(
        lang=lang, phrases=phrases, opening=opening, withheld=list(w.withheld), words=WORDS, correction=correction
    )
    return c, " ".join([intent] + [phrases[s][0].upper() + phrases[s][1:] + "." for s in opening])
