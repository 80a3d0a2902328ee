"""How a customer writes: the complaint in Russian or English, in the notation people type."""

from __future__ import annotations

import random
from datetime import date
from decimal import Decimal

from envs.bank.world import World

RU_MONTHS = ["января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября", "ноября", "декабря"]
EN_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
RU_REL = {0: "сегодня", 1: "вчера", 2: "позавчера"}
EN_REL = {0: "today", 1: "yesterday"}

RU_REASON = {
    "duplicate": "списали {amount} дважды, верните второе списание",
    "fraud": "списали {amount}, я эту операцию не совершал",
    "not_received": "оплатил {amount}, а товар так и не пришёл",
    "wrong_amount": "списали {amount}, а на кассе сумма была другая",
}
EN_REASON = {
    "duplicate": "I was charged {amount} twice, please refund the second one",
    "fraud": "there is a charge of {amount} I never made",
    "not_received": "I paid {amount} but the order never arrived",
    "wrong_amount": "I was charged {amount} but the price was different",
}


def _card(rng: random.Random, last4: str, ru: bool) -> str:
    forms = ["•• {c}", "*{c}", "**** {c}", "{c}"] + (["карты •• {c}", "карта {c}"] if ru else ["card ending {c}"])
    return rng.choice(forms).format(c=last4)


def _day(rng: random.Random, day: date, today: date, ru: bool) -> str:
    delta = (today - day).days
    rel = (RU_REL if ru else EN_REL).get(delta)
    forms = [day.strftime("%d.%m"), day.strftime("%d.%m.%Y"), day.isoformat()]
    forms.append(f"{day.day} {RU_MONTHS[day.month - 1]}" if ru else f"{EN_MONTHS[day.month - 1]} {day.day}")
    if rel:
        forms += [rel, rel]
    return rng.choice(forms)


def _amount(rng: random.Random, amount: Decimal, ru: bool) -> str:
    rub, kop = divmod(int(amount * 100), 100)
    grouped = f"{rub:,}"
    if ru:
        forms = [f"{grouped.replace(',', ' ')},{kop:02d} ₽", f"{rub},{kop:02d} руб.", f"{grouped.replace(',', ' ')}.{kop:02d}р"]
    else:
        forms = [f"RUB {grouped}.{kop:02d}", f"{rub}.{kop:02d} rub", f"₽{grouped}.{kop:02d}"]
    return rng.choice(forms)


def complaint(world: World, seed: int) -> tuple[str, str]:
    """(language, customer message)."""
    rng = random.Random(seed * 7919 + 17)
    ru = rng.random() < 0.6
    op = world.op(world.target)
    amount = _amount(rng, op.amount, ru)
    what = (RU_REASON if ru else EN_REASON)[world.reason].format(amount=amount)
    card, day = _card(rng, op.card_last4, ru), _day(rng, op.day, world.today, ru)
    if ru:
        return "ru", f"{day.capitalize()} с {card} {what}."
    return "en", f"{day.capitalize() if day[0].isalpha() else day}: on {card} {what}."
