"""The bank domain's world: a seeded customer (cards, recent operations, the charge they complain
about) and what the support line also handles: blocking a card, and the customer's earlier cases.

`make_world(seed)` is the one-complaint world of `bank-disputes`; `make_bank_world(seed)` builds
a support task of `tools-bank` on top of it (its own random stream, so the base world is the same).
"""

from __future__ import annotations

import functools
import random
import string
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel

Reason = Literal["duplicate", "fraud", "not_received", "wrong_amount"]
REASONS: tuple[Reason, ...] = ("duplicate", "fraud", "not_received", "wrong_amount")
MERCHANTS = [
    "Кофемания",
    "Пятёрочка",
    "Yandex Go",
    "Ozon",
    "Аптека 36,6",
    "Lamoda",
    "Wildberries",
    "Shell",
    "Steam",
    "Вкусвилл",
]


class Operation(BaseModel):
    id: str
    card_last4: str
    at: datetime
    amount: Decimal
    merchant: str

    @property
    def day(self) -> date:
        return self.at.date()


class World(BaseModel):
    today: date
    cards: list[str]
    operations: list[Operation]
    reason: Reason
    target: str  # id of the disputed operation
    original: str | None  # for duplicates: the first of the two identical charges

    def op(self, op_id: str) -> Operation:
        return next(o for o in self.operations if o.id == op_id)


def _op_id(rng: random.Random) -> str:
    return "op-" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=6))


def _amount(rng: random.Random) -> Decimal:
    rubles = rng.choice([rng.randint(90, 999), rng.randint(1000, 25000)])
    return (Decimal(rubles) + Decimal(rng.randint(0, 99)) / 100).quantize(Decimal("0.01"))


def make_world(seed: int) -> World:
    rng = random.Random(seed)
    today = date(2026, 3, 1) + timedelta(days=rng.randint(0, 240))
    # the draw of sampling the list of the 9,000 four-digit strings, without building it per world
    cards = [f"{n:04d}" for n in rng.sample(range(1000, 10000), 2)]
    ops: list[Operation] = []
    for _ in range(rng.randint(5, 7)):
        day = today - timedelta(days=rng.randint(0, 9))
        at = datetime.combine(day, datetime.min.time()) + timedelta(minutes=rng.randint(7 * 60, 22 * 60))
        # model_construct: the values are made here, of the fields' types (validation was a third of a world's cost)
        ops.append(
            Operation.model_construct(
                id=_op_id(rng), card_last4=rng.choice(cards), at=at, amount=_amount(rng), merchant=rng.choice(MERCHANTS)
            )
        )
    reason: Reason = rng.choice(REASONS)
    target = rng.choice(ops)
    original = None
    if reason == "duplicate":
        twin = target.model_copy(update={"id": _op_id(rng), "at": target.at + timedelta(minutes=rng.randint(1, 5))})
        ops.append(twin)
        original, target = target, twin
    ops.sort(key=lambda o: o.at, reverse=True)
    return World.model_construct(
        today=today,
        cards=cards,
        operations=ops,
        reason=reason,
        target=target.id,
        original=original.id if original else None,
    )


Kind = Literal["dispute", "fraud_block", "block", "status"]
Status = Literal["open", "in_review", "needs_documents", "resolved", "rejected"]
STATUSES: tuple[Status, ...] = ("open", "in_review", "needs_documents", "resolved", "rejected")
SLOT_SHARE = 0.4  # share of tasks played as multi-turn slot filling
CORRECTION_SHARE = 0.35  # share of slot tasks where the customer corrects the amount


class PastDispute(BaseModel):
    case_id: str
    card_last4: str
    amount: Decimal
    opened: date
    merchant: str
    status: Status


class BankWorld(BaseModel):
    seed: int
    base: World
    kind: Kind
    dialogue: Literal["single", "slots"]
    block_card: str | None  # the card to block (block, fraud_block, status-rejected)
    block_reason: Literal["lost", "stolen", "compromised"] | None
    past: list[PastDispute]
    status_case: str | None  # the case the customer asks about (status)
    withheld: list[str]
    wrong_amount: Decimal | None  # the amount first said, before the customer corrects it

    @property
    def today(self) -> date:
        return self.base.today


def _past(rng: random.Random, base: World, n: int) -> list[PastDispute]:
    numbers = rng.sample(range(100, 1000), n)
    return [
        PastDispute(
            case_id=f"case-{k:04d}",
            card_last4=rng.choice(base.cards),
            amount=(Decimal(rng.randint(300, 20000)) + Decimal(rng.randint(0, 99)) / 100).quantize(Decimal("0.01")),
            opened=base.today - timedelta(days=rng.randint(12, 60)),
            merchant=rng.choice(MERCHANTS),
            status=rng.choice(STATUSES),
        )
        for k in numbers
    ]


def _kind(rng: random.Random, base: World) -> Kind:
    if base.reason == "fraud" and rng.random() < 0.5:
        return "fraud_block"
    u = rng.random()
    return "block" if u < 0.2 else "status" if u < 0.4 else "dispute"


SLOTS: dict[str, list[str]] = {
    "dispute": ["card", "date", "amount", "reason"],
    "fraud_block": ["card", "date", "amount"],
    "block": ["card", "block_reason"],
    "status": ["case"],
}


@functools.lru_cache(maxsize=4096)
def _base(seed: int) -> World:
    # a task rebuilds its world often (its gold state, every reset)
    return make_world(seed)


def make_bank_world(seed: int) -> BankWorld:
    base = _base(seed).model_copy(deep=True)
    rng = random.Random(seed * 31 + 7)  # a stream of its own, so the base world stays the seed's
    kind = _kind(rng, base)
    past = _past(rng, base, rng.randint(2, 3))
    status_case = block_card = block_reason = None
    if kind == "status":
        target = rng.choice(past)
        target.status = "rejected" if rng.random() < 0.4 else rng.choice(STATUSES[:4])
        status_case = target.case_id
        if target.status == "rejected":
            block_card, block_reason = target.card_last4, "compromised"
    elif kind == "block":
        block_card, block_reason = rng.choice(base.cards), rng.choice(["lost", "stolen"])
    elif kind == "fraud_block":
        block_card, block_reason = base.op(base.target).card_last4, "compromised"
    dialogue: Literal["single", "slots"] = "slots" if rng.random() < SLOT_SHARE else "single"
    withheld: list[str] = []
    wrong_amount = None
    if dialogue == "slots":
        slots = SLOTS[kind]
        withheld = rng.sample(slots, rng.randint(1, len(slots)))
        withheld.sort(key=slots.index)
        amount = base.op(base.target).amount
        if kind in {"dispute", "fraud_block"} and "amount" not in withheld and rng.random() < CORRECTION_SHARE:
            wrong_amount = amount + rng.choice([Decimal(-100), Decimal(100), Decimal(40), Decimal(-60)])
            wrong_amount = wrong_amount if wrong_amount > 0 else amount + 100
    return BankWorld(
        seed=seed,
        base=base,
        kind=kind,
        dialogue=dialogue,
        block_card=block_card,
        block_reason=block_reason,
        past=past,
        status_case=status_case,
        withheld=withheld,
        wrong_amount=wrong_amount,
    )
