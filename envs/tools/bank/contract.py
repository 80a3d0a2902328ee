"""Input contracts of the bank's tools, in the seed's three phases.

before: human notation is normalised ("•• 4417", "вчера", "22 августа", "1 200,50 ₽", "Duplicate");
core: pydantic types; after: cross-field rules and rules against the customer's real state.
The reference date and the state come from the validation context, never from the clock, so a
task validates the same way on any day. With `normalize=False` in the context the before phase
is off (the strict contract): human notation is rejected with feedback instead of repaired.
`open_dispute` is the seed's tool; `bank-disputes` offers it alone, `tools-bank` with the rest.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field
from pydantic_core import PydanticCustomError

from envs.tools.bank.world import REASONS, Reason, World
from envs.tools.fields import PastDay, choice
from envs.tools.tooling import ToolInput
from envs.validation import fail, normalised

BlockReason = Literal["lost", "stolen", "compromised"]
BLOCK_REASONS: tuple[str, ...] = ("lost", "stolen", "compromised")
BLOCK_ALIASES = {
    "утеряна": "lost",
    "потеряна": "lost",
    "потеря": "lost",
    "утеря": "lost",
    "lost card": "lost",
    "украдена": "stolen",
    "кража": "stolen",
    "theft": "stolen",
    "stolen card": "stolen",
    "скомпрометирована": "compromised",
    "мошенничество": "compromised",
    "fraud": "compromised",
}
_CASE = re.compile(r"(\d{1,4})\s*$")


def normalize_card(v: object) -> object:
    if not isinstance(v, (str, int)):
        return v
    digits = "".join(ch for ch in str(v) if ch.isdigit())
    return digits[-4:] if len(digits) >= 4 else digits


def normalize_amount(v: object) -> object:
    if not isinstance(v, str):
        return v
    s = re.sub(r"[^\d.,]", "", v.replace("\u00a0", " ")).strip(".,")
    if "," in s and "." in s:  # the later separator is the decimal one
        thousands = "," if s.rfind(".") > s.rfind(",") else "."
        s = s.replace(thousands, "")
    return s.replace(",", ".")


def normalize_case(v: object) -> object:
    """'№ 42', 'case #0042', 'CASE-0042', 'дело 0042' -> 'case-0042'."""
    if not isinstance(v, (str, int)):
        return v
    m = _CASE.search(str(v).strip())
    return f"case-{int(m[1]):04d}" if m else str(v).strip()


def _lowered(v: object) -> object:
    return v.strip().lower() if isinstance(v, str) else v


CardLast4 = Annotated[
    str, Field(description="Last 4 digits of the card, digits only", pattern=r"^\d{4}$"), normalised(normalize_card)
]
Amount = Annotated[Decimal, Field(gt=0), normalised(normalize_amount)]


def _check_card(card: str, ctx: dict[str, Any], field: str = "card_last4") -> None:
    bank = ctx.get("bank")
    if bank is not None and card not in bank.cards:
        raise fail("unknown_card", "not one of the customer's cards", field, card, list(bank.cards))


class OpenDisputeInput(ToolInput):
    card_last4: CardLast4
    operation_date: PastDay = Field(description="Date of the operation, YYYY-MM-DD")
    amount: Amount = Field(description="Amount of the operation in rubles, e.g. 1200.50")
    reason: Annotated[Reason, normalised(_lowered)] = Field(description="Reason of the dispute")
    original_operation_id: str | None = Field(
        None, description="Id of the original operation; required when reason is 'duplicate'"
    )

    def rules(self, ctx: dict[str, Any]) -> None:
        if self.reason == "duplicate" and not self.original_operation_id:
            raise PydanticCustomError(
                "missing_original_operation",
                "reason 'duplicate' requires original_operation_id",
                {"field": "original_operation_id", "observed": self.original_operation_id},
            )
        world: World | None = ctx.get("world")
        if world is not None:
            check_state(self, world)


def check_state(inp: OpenDisputeInput, world: World) -> None:
    if inp.card_last4 not in world.cards:
        raise fail("unknown_card", "not one of the customer's cards", "card_last4", inp.card_last4, world.cards)
    on_card = [o for o in world.operations if o.card_last4 == inp.card_last4]
    on_day = [o for o in on_card if o.day == inp.operation_date]
    if not on_day:
        days = sorted({o.day.isoformat() for o in on_card})
        raise fail(
            "no_operation_on_date",
            "no operation on this card on that date",
            "operation_date",
            inp.operation_date.isoformat(),
            days,
        )
    if not any(o.amount == inp.amount for o in on_day):
        amounts = sorted({str(o.amount) for o in on_day}, key=Decimal)
        raise fail(
            "no_operation_with_amount", "no operation with this amount on that date", "amount", str(inp.amount), amounts
        )
    origin = inp.original_operation_id
    if origin is not None and origin not in {o.id for o in world.operations}:
        raise fail(
            "unknown_operation",
            "not one of the customer's operations",
            "original_operation_id",
            origin,
            [o.id for o in world.operations],
        )


def allowed_values(field: str, world: World) -> list[str]:
    """What the contract would accept at a field, for errors that do not carry their own list."""
    # each list built only for the field asked about (a violation asks on every rejected call)
    makers: dict[str, Callable[[], list[str]]] = {
        "card_last4": lambda: list(world.cards),
        "operation_date": lambda: sorted({o.day.isoformat() for o in world.operations}),
        "amount": lambda: sorted({str(o.amount) for o in world.operations}, key=Decimal),
        "reason": lambda: list(REASONS),
        "original_operation_id": lambda: [o.id for o in world.operations],
    }
    values = makers.get(field)
    return values() if values is not None else []


class FindOperationsInput(ToolInput):
    card_last4: CardLast4
    date_from: PastDay | None = Field(None, description="First day to include, YYYY-MM-DD")
    date_to: PastDay | None = Field(None, description="Last day to include, YYYY-MM-DD")
    amount: Amount | None = Field(None, description="Only operations of exactly this amount in rubles")

    def rules(self, ctx: dict[str, Any]) -> None:
        if self.date_from and self.date_to and self.date_to < self.date_from:
            raise fail(
                "date_range_reversed",
                "date_to is before date_from",
                "date_to",
                self.date_to.isoformat(),
                [f">= {self.date_from.isoformat()}"],
            )
        _check_card(self.card_last4, ctx)


class BlockCardInput(ToolInput):
    card_last4: CardLast4
    reason: Annotated[BlockReason, choice(BLOCK_ALIASES)] = Field(description="Why the card is blocked")

    def rules(self, ctx: dict[str, Any]) -> None:
        _check_card(self.card_last4, ctx)
        bank = ctx.get("bank")
        if bank is not None and bank.card_status[self.card_last4] == "blocked":
            active = [c for c, s in bank.card_status.items() if s == "active"]
            raise fail("card_already_blocked", "the card is already blocked", "card_last4", self.card_last4, active)


class DisputeStatusInput(ToolInput):
    case_id: Annotated[str, normalised(normalize_case)] = Field(
        description="Id of the dispute case, as case-NNNN", pattern=r"^case-\d{4}$"
    )

    def rules(self, ctx: dict[str, Any]) -> None:
        bank = ctx.get("bank")
        if bank is not None and self.case_id not in bank.case_ids():
            raise fail("unknown_case", "no dispute case with this id", "case_id", self.case_id, bank.case_ids())
