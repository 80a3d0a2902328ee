"""Input contracts of the bank support tools, in the seed's three phases.

`open_dispute` is the bank family's `OpenDisputeInput` with one change in the before phase: the
date also reads month names ("22 августа", "Aug 22") and weekdays, as customers write them.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from envs.bank.contract import OpenDisputeInput, normalize_amount, normalize_card
from envs.tools.notation import normalize_choice, normalize_day
from envs.tools.tooling import fail
from envs.validation import context_of as _ctx
from envs.validation import normalizing as _norm

BlockReason = Literal["lost", "stolen", "compromised"]
BLOCK_REASONS: tuple[str, ...] = ("lost", "stolen", "compromised")
BLOCK_ALIASES = {
    "утеряна": "lost", "потеряна": "lost", "потеря": "lost", "утеря": "lost", "lost card": "lost",
    "украдена": "stolen", "кража": "stolen", "theft": "stolen", "stolen card": "stolen",
    "скомпрометирована": "compromised", "мошенничество": "compromised", "fraud": "compromised",
}
_CASE = re.compile(r"(\d{1,4})\s*$")




def _day(v: object, info: ValidationInfo) -> object:
    ctx = _ctx(info)
    return normalize_day(v, ctx["today"], "past") if _norm(info) and "today" in ctx else v


def _card_of(v: object, info: ValidationInfo) -> object:
    return normalize_card(v) if _norm(info) else v


def _check_card(card: str, info: ValidationInfo, field: str = "card_last4") -> None:
    bank = _ctx(info).get("bank")
    if bank is not None and card not in bank.cards:
        raise fail("unknown_card", "not one of the customer's cards", field, card, list(bank.cards))


class OpenDisputeArgs(OpenDisputeInput):
    @field_validator("operation_date", mode="before")
    @classmethod
    def _date(cls, v: object, info: ValidationInfo) -> object:
        return _day(v, info)


class FindOperationsInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    card_last4: str = Field(description="Last 4 digits of the card, digits only", pattern=r"^\d{4}$")
    date_from: date | None = Field(None, description="First day to include, YYYY-MM-DD")
    date_to: date | None = Field(None, description="Last day to include, YYYY-MM-DD")
    amount: Decimal | None = Field(None, gt=0, description="Only operations of exactly this amount in rubles")

    @field_validator("card_last4", mode="before")
    @classmethod
    def _card(cls, v: object, info: ValidationInfo) -> object:
        return _card_of(v, info)

    @field_validator("date_from", "date_to", mode="before")
    @classmethod
    def _dates(cls, v: object, info: ValidationInfo) -> object:
        return _day(v, info)

    @field_validator("amount", mode="before")
    @classmethod
    def _amount(cls, v: object, info: ValidationInfo) -> object:
        return normalize_amount(v) if _norm(info) else v

    @model_validator(mode="after")
    def _range(self, info: ValidationInfo) -> "FindOperationsInput":
        if self.date_from and self.date_to and self.date_to < self.date_from:
            raise fail("date_range_reversed", "date_to is before date_from", "date_to", self.date_to.isoformat(), [f">= {self.date_from.isoformat()}"])
        _check_card(self.card_last4, info)
        return self


class BlockCardInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    card_last4: str = Field(description="Last 4 digits of the card, digits only", pattern=r"^\d{4}$")
    reason: BlockReason = Field(description="Why the card is blocked")

    @field_validator("card_last4", mode="before")
    @classmethod
    def _card(cls, v: object, info: ValidationInfo) -> object:
        return _card_of(v, info)

    @field_validator("reason", mode="before")
    @classmethod
    def _reason(cls, v: object, info: ValidationInfo) -> object:
        return normalize_choice(v, BLOCK_ALIASES) if _norm(info) else v

    @model_validator(mode="after")
    def _state(self, info: ValidationInfo) -> "BlockCardInput":
        _check_card(self.card_last4, info)
        bank = _ctx(info).get("bank")
        if bank is not None and bank.card_status[self.card_last4] == "blocked":
            active = [c for c, s in bank.card_status.items() if s == "active"]
            raise fail("card_already_blocked", "the card is already blocked", "card_last4", self.card_last4, active)
        return self


def normalize_case(v: object) -> object:
    """'№ 42', 'case #0042', 'CASE-0042', 'дело 0042' -> 'case-0042'."""
    if not isinstance(v, (str, int)):
        return v
    m = _CASE.search(str(v).strip())
    return f"case-{int(m[1]):04d}" if m else str(v).strip()


class DisputeStatusInput(BaseModel):
    model_config = ConfigDict(extra="forbid")

    case_id: str = Field(description="Id of the dispute case, as case-NNNN", pattern=r"^case-\d{4}$")

    @field_validator("case_id", mode="before")
    @classmethod
    def _case(cls, v: object, info: ValidationInfo) -> object:
        return normalize_case(v) if _norm(info) else v

    @model_validator(mode="after")
    def _exists(self, info: ValidationInfo) -> "DisputeStatusInput":
        bank = _ctx(info).get("bank")
        if bank is not None and self.case_id not in bank.case_ids():
            raise fail("unknown_case", "no dispute case with this id", "case_id", self.case_id, bank.case_ids())
        return self
