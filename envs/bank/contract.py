"""The input contract of `open_dispute`, in the seed's three phases.

before: human notation is normalised ("•• 4417", "вчера", "1 200,50 ₽", "Duplicate");
core: pydantic types; after: cross-field rules and rules against the customer's real state.
The reference date and the state come from the validation context, never from the clock, so a
task validates the same way on any day. With `normalize=False` in the context the before phase
is off (the strict contract): human notation is rejected with feedback instead of repaired.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from decimal import Decimal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from envs.bank.world import REASONS, Reason, World
from envs.validation import context_of as _ctx
from envs.validation import fail

RELATIVE_DAYS = {"сегодня": 0, "today": 0, "вчера": 1, "yesterday": 1, "позавчера": 2, "day before yesterday": 2}
_DOTTED = re.compile(r"^(\d{1,2})[./](\d{1,2})(?:[./](\d{2,4}))?$")



def normalize_card(v: object) -> object:
    if not isinstance(v, (str, int)):
        return v
    digits = "".join(ch for ch in str(v) if ch.isdigit())
    return digits[-4:] if len(digits) >= 4 else digits


def normalize_date(v: object, today: date) -> object:
    if not isinstance(v, str):
        return v
    key = " ".join(v.strip().lower().split())
    if key in RELATIVE_DAYS:
        return today - timedelta(days=RELATIVE_DAYS[key])
    m = _DOTTED.match(key)
    if m:
        day, month, year = int(m[1]), int(m[2]), m[3]
        y = today.year if year is None else int(year) + (2000 if len(year) == 2 else 0)
        try:
            return date(y, month, day)
        except ValueError:
            return v
    return key


def normalize_amount(v: object) -> object:
    if not isinstance(v, str):
        return v
    s = re.sub(r"[^\d.,]", "", v.replace("\u00a0", " ")).strip(".,")
    if "," in s and "." in s:  # the later separator is the decimal one
        thousands = "," if s.rfind(".") > s.rfind(",") else "."
        s = s.replace(thousands, "")
    return s.replace(",", ".")


class OpenDisputeInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    card_last4: str = Field(description="Last 4 digits of the card, digits only", pattern=r"^\d{4}$")
    operation_date: date = Field(description="Date of the operation, YYYY-MM-DD")
    amount: Decimal = Field(gt=0, description="Amount of the operation in rubles, e.g. 1200.50")
    reason: Reason = Field(description="Reason of the dispute")
    original_operation_id: str | None = Field(
        None, description="Id of the original operation; required when reason is 'duplicate'"
    )

    @field_validator("card_last4", mode="before")
    @classmethod
    def _card(cls, v: object, info: ValidationInfo) -> object:
        return normalize_card(v) if _ctx(info).get("normalize", True) else v

    @field_validator("operation_date", mode="before")
    @classmethod
    def _date(cls, v: object, info: ValidationInfo) -> object:
        ctx = _ctx(info)
        return normalize_date(v, ctx["today"]) if ctx.get("normalize", True) and "today" in ctx else v

    @field_validator("amount", mode="before")
    @classmethod
    def _amount(cls, v: object, info: ValidationInfo) -> object:
        return normalize_amount(v) if _ctx(info).get("normalize", True) else v

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, v: object, info: ValidationInfo) -> object:
        return v.strip().lower() if isinstance(v, str) and _ctx(info).get("normalize", True) else v

    @model_validator(mode="after")
    def _duplicate_needs_origin(self) -> "OpenDisputeInput":
        if self.reason == "duplicate" and not self.original_operation_id:
            raise PydanticCustomError(
                "missing_original_operation", "reason 'duplicate' requires original_operation_id",
                {"field": "original_operation_id", "observed": self.original_operation_id},
            )
        return self

    @model_validator(mode="after")
    def _matches_state(self, info: ValidationInfo) -> "OpenDisputeInput":
        world: World | None = _ctx(info).get("world")
        if world is None:
            return self
        check_state(self, world)
        return self


def check_state(inp: OpenDisputeInput, world: World) -> None:
    if inp.card_last4 not in world.cards:
        raise fail("unknown_card", "not one of the customer's cards", "card_last4", inp.card_last4, world.cards)
    on_card = [o for o in world.operations if o.card_last4 == inp.card_last4]
    on_day = [o for o in on_card if o.day == inp.operation_date]
    if not on_day:
        days = sorted({o.day.isoformat() for o in on_card})
        raise fail("no_operation_on_date", "no operation on this card on that date", "operation_date", inp.operation_date.isoformat(), days)
    if not any(o.amount == inp.amount for o in on_day):
        amounts = sorted({str(o.amount) for o in on_day}, key=Decimal)
        raise fail("no_operation_with_amount", "no operation with this amount on that date", "amount", str(inp.amount), amounts)
    origin = inp.original_operation_id
    if origin is not None and origin not in {o.id for o in world.operations}:
        raise fail("unknown_operation", "not one of the customer's operations", "original_operation_id", origin, [o.id for o in world.operations])


def allowed_values(field: str, world: World) -> list[str]:
    """What the contract would accept at a field, for errors that do not carry their own list."""
    return {
        "card_last4": list(world.cards),
        "operation_date": sorted({o.day.isoformat() for o in world.operations}),
        "amount": sorted({str(o.amount) for o in world.operations}, key=Decimal),
        "reason": list(REASONS),
        "original_operation_id": [o.id for o in world.operations],
    }.get(field, [])
