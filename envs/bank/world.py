"""A seeded customer: cards, recent operations, and the charge the customer complains about."""

from __future__ import annotations

import random
import string
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel

Reason = Literal["duplicate", "fraud", "not_received", "wrong_amount"]
REASONS: tuple[str, ...] = ("duplicate", "fraud", "not_received", "wrong_amount")
MERCHANTS = ["Кофемания", "Пятёрочка", "Yandex Go", "Ozon", "Аптека 36,6", "Lamoda", "Wildberries", "Shell", "Steam", "Вкусвилл"]


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
    cards = rng.sample([f"{n:04d}" for n in range(1000, 10000)], 2)
    ops: list[Operation] = []
    for _ in range(rng.randint(5, 7)):
        day = today - timedelta(days=rng.randint(0, 9))
        at = datetime.combine(day, datetime.min.time()) + timedelta(minutes=rng.randint(7 * 60, 22 * 60))
        ops.append(Operation(id=_op_id(rng), card_last4=rng.choice(cards), at=at, amount=_amount(rng), merchant=rng.choice(MERCHANTS)))
    reason: Reason = rng.choice(REASONS)  # type: ignore[assignment]
    target = rng.choice(ops)
    original = None
    if reason == "duplicate":
        twin = target.model_copy(update={"id": _op_id(rng), "at": target.at + timedelta(minutes=rng.randint(1, 5))})
        ops.append(twin)
        original, target = target, twin
    ops.sort(key=lambda o: o.at, reverse=True)
    return World(today=today, cards=cards, operations=ops, reason=reason, target=target.id, original=original.id if original else None)
