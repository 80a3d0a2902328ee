"""The simulated disputes service: its state is the ground truth of success."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from pydantic import BaseModel

from envs.bank.contract import OpenDisputeInput
from envs.bank.world import World


class Dispute(BaseModel):
    case_id: str
    card_last4: str
    operation_date: date
    amount: Decimal
    reason: str
    original_operation_id: str | None


class DisputeService:
    def __init__(self) -> None:
        self.disputes: list[Dispute] = []

    def open(self, inp: OpenDisputeInput) -> Dispute:
        d = Dispute(case_id=f"case-{len(self.disputes) + 1:04d}", **inp.model_dump())
        self.disputes.append(d)
        return d


def gold(world: World) -> dict[str, object]:
    op = world.op(world.target)
    return {
        "card_last4": op.card_last4,
        "operation_date": op.day,
        "amount": op.amount,
        "reason": world.reason,
        "original_operation_id": world.original,
    }


def solved(service: DisputeService, world: World) -> bool:
    """Exactly one dispute, with the gold fields. For non-duplicates the origin is not asked for."""
    if len(service.disputes) != 1:
        return False
    got = service.disputes[0].model_dump(exclude={"case_id"})
    want = gold(world)
    if world.reason != "duplicate":
        got.pop("original_operation_id")
        want.pop("original_operation_id")
    return got == want
