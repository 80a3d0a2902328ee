"""The simulated bank: cards, operations, dispute cases. Its state is the ground truth of success."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from pydantic import BaseModel

from envs.tools.bank.contract import BlockCardInput, DisputeStatusInput, FindOperationsInput, OpenDisputeInput
from envs.tools.bank.world import BankWorld, World


class Dispute(BaseModel):
    case_id: str
    card_last4: str
    operation_date: date
    amount: Decimal
    reason: str
    original_operation_id: str | None


class DisputeService:
    """The dispute cases opened in one episode (the whole backend of `bank-disputes`)."""

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


class BankBackend:
    def __init__(self, world: BankWorld):
        self.world = world
        self.cards = list(world.base.cards)
        self.card_status = {c: "active" for c in self.cards}
        self.past = {d.case_id: d for d in world.past}
        self.disputes = DisputeService()  # the cases opened in this episode

    def case_ids(self) -> list[str]:
        return sorted(self.past) + [d.case_id for d in self.disputes.disputes]

    def find_operations(self, inp: FindOperationsInput) -> list[dict[str, Any]]:
        out = []
        for o in self.world.base.operations:
            if o.card_last4 != inp.card_last4 or (inp.amount is not None and o.amount != inp.amount):
                continue
            if (inp.date_from and o.day < inp.date_from) or (inp.date_to and o.day > inp.date_to):
                continue
            out.append(
                {
                    "id": o.id,
                    "at": o.at.strftime("%Y-%m-%d %H:%M"),
                    "amount": str(o.amount),
                    "currency": "RUB",
                    "merchant": o.merchant,
                }
            )
        return out

    def open_dispute(self, inp: OpenDisputeInput) -> dict[str, Any]:
        d = self.disputes.open(inp)
        deadline = self.world.today + timedelta(days=30)
        return {"case_id": d.case_id, "status": "open", "review_deadline": deadline.isoformat()}

    def block_card(self, inp: BlockCardInput) -> dict[str, Any]:
        self.card_status[inp.card_last4] = "blocked"
        return {"card_last4": inp.card_last4, "status": "blocked", "reason": inp.reason}

    def dispute_status(self, inp: DisputeStatusInput) -> dict[str, Any]:
        if inp.case_id in self.past:
            d = self.past[inp.case_id]
            return {
                "case_id": d.case_id,
                "status": d.status,
                "card_last4": d.card_last4,
                "amount": str(d.amount),
                "merchant": d.merchant,
                "opened": d.opened.isoformat(),
            }
        new = next(d for d in self.disputes.disputes if d.case_id == inp.case_id)
        return {
            "case_id": new.case_id,
            "status": "open",
            "card_last4": new.card_last4,
            "amount": str(new.amount),
            "opened": self.world.today.isoformat(),
        }

    def state(self) -> dict[str, Any]:
        # amounts stay Decimals: 1200.5 and 1200.50 are the same charge
        out: dict[str, Any] = {f"card:{c}": s for c, s in self.card_status.items()}
        for d in self.past.values():
            out[f"dispute:{d.case_id}"] = (d.card_last4, d.opened.isoformat(), d.amount, d.status)
        for n in self.disputes.disputes:
            # the origin is part of a dispute only when the reason is a duplicate charge
            origin = n.original_operation_id if n.reason == "duplicate" else None
            out[f"dispute:{n.case_id}"] = (n.card_last4, n.operation_date.isoformat(), n.amount, n.reason, origin)
        return out
