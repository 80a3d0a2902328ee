"""How the bank's customer writes, in Russian or English, in the notation people type: the whole
complaint in one message (`bank-disputes`), or slot by slot to a support agent (`tools-bank`)."""

from __future__ import annotations

import random
from datetime import date
from decimal import Decimal

from envs.tools.bank.world import SLOTS, BankWorld, World
from envs.tools.notation import EN_MONTH_ABBREVIATIONS, RU_MONTHS_GENITIVE
from envs.tools.slots import Correction, Customer, Lang

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


def _card_mention(rng: random.Random, last4: str, ru: bool) -> str:
    """As written in a one-message complaint (the seed's forms)."""
    forms = ["•• {c}", "*{c}", "**** {c}", "{c}"] + (["карты •• {c}", "карта {c}"] if ru else ["card ending {c}"])
    return rng.choice(forms).format(c=last4)


def _day(rng: random.Random, day: date, today: date, ru: bool) -> str:
    delta = (today - day).days
    rel = (RU_REL if ru else EN_REL).get(delta)
    forms = [day.strftime("%d.%m"), day.strftime("%d.%m.%Y"), day.isoformat()]
    forms.append(
        f"{day.day} {RU_MONTHS_GENITIVE[day.month - 1]}" if ru else f"{EN_MONTH_ABBREVIATIONS[day.month - 1]} {day.day}"
    )
    if rel:
        forms += [rel, rel]
    return rng.choice(forms)


def _amount(rng: random.Random, amount: Decimal, ru: bool) -> str:
    rub, kop = divmod(int(amount * 100), 100)
    grouped = f"{rub:,}"
    if ru:
        forms = [
            f"{grouped.replace(',', ' ')},{kop:02d} ₽",
            f"{rub},{kop:02d} руб.",
            f"{grouped.replace(',', ' ')}.{kop:02d}р",
        ]
    else:
        forms = [f"RUB {grouped}.{kop:02d}", f"{rub}.{kop:02d} rub", f"₽{grouped}.{kop:02d}"]
    return rng.choice(forms)


def complaint(world: World, seed: int) -> tuple[Lang, str]:
    """(language, customer message): the whole complaint in one message, as `bank-disputes` opens."""
    rng = random.Random(seed * 7919 + 17)
    ru = rng.random() < 0.6
    op = world.op(world.target)
    amount = _amount(rng, op.amount, ru)
    what = (RU_REASON if ru else EN_REASON)[world.reason].format(amount=amount)
    card, day = _card_mention(rng, op.card_last4, ru), _day(rng, op.day, world.today, ru)
    if ru:
        return "ru", f"{day.capitalize()} с {card} {what}."
    return "en", f"{day.capitalize() if day[0].isalpha() else day}: on {card} {what}."


WORDS: dict[str, tuple[str, ...]] = {
    "card": ("карт", "card"),
    "date": ("дат", "когда", "числ", "какой день", "date", "when", "which day"),
    "amount": ("сумм", "сколько", "amount", "how much", "sum"),
    "reason": (
        "причин",
        "почему",
        "что случилось",
        "что произошло",
        "reason",
        "why",
        "what happened",
        "what went wrong",
    ),
    "block_reason": (
        "причин",
        "почему",
        "что случилось",
        "что произошло",
        "потер",
        "укра",
        "reason",
        "why",
        "what happened",
        "lost",
        "stolen",
    ),
    "case": ("номер", "обращени", "case", "number"),
}
REASON = {
    "ru": {
        "duplicate": "списали дважды, верните второе списание",
        "fraud": "я эту операцию не совершал",
        "not_received": "оплатил(а), а товар так и не пришёл",
        "wrong_amount": "на кассе сумма была другая",
    },
    "en": {
        "duplicate": "I was charged twice, please refund the second one",
        "fraud": "I never made this payment",
        "not_received": "I paid but the order never arrived",
        "wrong_amount": "the price at the till was different",
    },
}
BLOCK = {
    "ru": {"lost": "я её потерял(а)", "stolen": "её украли"},
    "en": {"lost": "I lost it", "stolen": "it was stolen"},
}
INTENT = {
    "dispute": {"ru": "Здравствуйте, хочу оспорить списание.", "en": "Hi, I want to dispute a charge."},
    "fraud_block": {
        "ru": "Мне пришло списание, которого я не делал(а). Заблокируйте карту и оспорьте операцию.",
        "en": "There is a charge I never made. Please block the card and dispute the charge.",
    },
    "block": {"ru": "Нужно срочно заблокировать карту.", "en": "I need to block my card right away."},
    "status": {
        "ru": "Что с моим спором? Если его отклонили, заблокируйте ту карту: с неё продолжают списывать.",
        "en": "What is the status of my dispute? If it was rejected, block that card: they keep charging it.",
    },
}


def _card_typed(rng: random.Random, last4: str) -> str:
    """As typed: bullets, stars, the whole number with spaces or dots."""
    whole = "".join(str(rng.randint(0, 9)) for _ in range(12)) + last4
    forms = [
        "•• {c}",
        "*{c}",
        "**** {c}",
        "{c}",
        " ".join(whole[i : i + 4] for i in range(0, 16, 4)),
        whole[:4] + "." + "." * 8 + last4,
    ]
    return rng.choice(forms).format(c=last4)


def _case(rng: random.Random, case_id: str, ru: bool) -> str:
    n = int(case_id.split("-")[1])
    forms = [f"№ {n:04d}", f"№{n}", case_id.upper(), f"case #{n}"] + (
        [f"дело {n:04d}"] if ru else [f"case no. {n:04d}"]
    )
    return rng.choice(forms)


def slot_phrases(w: BankWorld, rng: random.Random, ru: bool, said: str) -> dict[str, str]:
    """Each slot as the customer says it; `said` is the amount as first stated."""
    lang = "ru" if ru else "en"
    op = w.base.op(w.base.target)
    card = w.block_card if w.kind == "block" else op.card_last4
    day = _day(rng, op.day, w.today, ru)
    out = {
        "card": (f"карта {_card_typed(rng, card or '')}" if ru else f"the card is {_card_typed(rng, card or '')}"),
        "date": (f"списание было {day}" if ru else f"the charge was {'' if day[0].isalpha() else 'on '}{day}"),
        "amount": (f"сумма {said}" if ru else f"the amount was {said}"),
        "reason": REASON[lang][w.base.reason],
    }
    if w.block_reason in BLOCK[lang]:
        out["block_reason"] = BLOCK[lang][w.block_reason or ""]
    if w.status_case:
        out["case"] = (
            f"номер обращения {_case(rng, w.status_case, ru)}"
            if ru
            else f"the case number is {_case(rng, w.status_case, ru)}"
        )
    return out


def customer(w: BankWorld) -> tuple[Customer, str]:
    """The scripted customer and the first message."""
    rng = random.Random(w.seed * 7919 + 17)
    lang, whole = complaint(w.base, w.seed)  # the seed's one-message complaint, for one-turn disputes
    ru = lang == "ru"
    slots = SLOTS[w.kind]
    amount = w.base.op(w.base.target).amount
    said = _amount(rng, w.wrong_amount if w.wrong_amount is not None else amount, ru)
    phrases = slot_phrases(w, rng, ru, said)
    correction = None
    if w.wrong_amount is not None:
        right = _amount(rng, amount, ru)
        message = (
            f"ой, простите, сумма не {said}, а {right}"
            if ru
            else f"sorry, my mistake: the amount was {right}, not {said}"
        )
        correction = Correction(slot="amount", message=message, value=right, value_words=(str(int(amount)),))
    opening = [s for s in slots if s not in w.withheld]
    c = Customer(
        lang=lang, phrases=phrases, opening=opening, withheld=list(w.withheld), words=WORDS, correction=correction
    )
    if w.kind == "dispute" and w.dialogue == "single":
        return c, whole
    parts = [INTENT[w.kind][lang]] + [phrases[s][0].upper() + phrases[s][1:] + "." for s in opening]
    return c, " ".join(parts)
