"""A plugin to copy: a small tool domain of your own (a shop's refunds) and a condition of your own.

    repair-harness suites --plugin examples/plugins/shop_refunds.py
    repair-harness run --plugin examples/plugins/shop_refunds.py --suite shop-refunds \
        --model agent:gold,agent:reader --conditions raw,allowed_json,shop_hint --out runs/shop

The tools' input contract is pydantic: a `before` validator normalises an order id typed as
"#A-1042" or "a1042", the field types are the core, and the `after` rules check the state (the
order exists, the refund is not larger than what was paid). The backend refuses what only the
state can tell (an order refunded already). Everything else — the episode loop, the conditions,
the records, the reference agents — is the harness's.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, model_validator

from conditions import register_condition
from envs.authoring import Refused, TaskDraft, ToolDef, ToolSuite, register
from envs.contract import ToolCall, Violation
from envs.validation import context_of, fail, normalised

Reason = Literal["damaged", "late", "wrong_item", "not_wanted"]
NAMES = ("Ada", "Boris", "Chen", "Dana", "Emil", "Farah", "Goran", "Hana")
GOODS = ("kettle", "lamp", "backpack", "headphones", "teapot", "blanket", "desk fan", "umbrella")


@dataclass
class Order:
    id: str
    item: str
    paid: Decimal
    refunded: Decimal | None = None
    reason: str | None = None


@dataclass
class Shop:
    """One customer's orders: the backend's whole state."""

    customer: str
    orders: dict[str, Order] = field(default_factory=dict)
    looked_up: set[str] = field(default_factory=set)  # the orders get_order has shown

    def order_ids(self) -> list[str]:
        return list(self.orders)


def shop_for(seed: int) -> Shop:
    rng = random.Random(seed)
    shop = Shop(customer=rng.choice(NAMES))
    for _ in range(rng.randint(2, 4)):
        number = rng.randint(1000, 9999)
        paid = Decimal(rng.randint(900, 25_000)) / 100
        shop.orders[f"A-{number}"] = Order(f"A-{number}", rng.choice(GOODS), paid)
    return shop


def _order_id(value: Any) -> Any:
    """before: "#a1042", "A 1042" and "a-1042" all mean A-1042."""
    if isinstance(value, str) and (m := re.fullmatch(r"\s*#?\s*[Aa][\s-]?(\d{4})\s*", value)):
        return f"A-{m.group(1)}"
    return value


OrderId = Annotated[str, normalised(_order_id), Field(description="The order's id, e.g. A-1042")]


class StateRules(BaseModel):
    """after: what only the customer's orders can tell (read from the validation context)."""

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="after")
    def _state(self, info: ValidationInfo) -> StateRules:
        shop: Shop = context_of(info)["shop"]
        order_id = getattr(self, "order_id", None)
        if order_id is not None and order_id not in shop.orders:
            raise fail("unknown_order", "there is no such order", "order_id", order_id, shop.order_ids())
        amount = getattr(self, "amount", None)
        if order_id is not None and amount is not None and amount > shop.orders[order_id].paid:
            paid = str(shop.orders[order_id].paid)
            raise fail("amount_above_paid", "a refund cannot exceed what was paid", "amount", str(amount), [paid])
        return self


class GetOrderInput(StateRules):
    order_id: OrderId


class RefundInput(StateRules):
    order_id: OrderId
    reason: Reason = Field(description="Why the customer wants the money back")
    amount: Decimal = Field(gt=0, decimal_places=2, description="The amount to refund, e.g. 12.50")


def get_order(shop: Shop, inp: GetOrderInput) -> dict[str, Any]:
    o = shop.orders[inp.order_id]
    shop.looked_up.add(o.id)
    return {"order_id": o.id, "item": o.item, "paid": str(o.paid), "refunded": o.refunded is not None}


def refund(shop: Shop, inp: RefundInput) -> dict[str, Any]:
    order = shop.orders[inp.order_id]
    if order.refunded is not None:
        raise Refused("already_refunded", "this order was refunded already", "order_id", inp.order_id)
    order.refunded, order.reason = inp.amount, inp.reason
    return {"order_id": order.id, "refunded": str(inp.amount), "status": "refund issued"}


PHRASES: dict[Reason, str] = {
    "damaged": "it arrived broken",
    "late": "it came two weeks after the promised date",
    "wrong_item": "you sent me something else",
    "not_wanted": "I changed my mind and sent it back unopened",
}


def task(seed: int, shop: Shop) -> TaskDraft:
    rng = random.Random(seed * 31 + 7)
    order = shop.orders[rng.choice(shop.order_ids())]
    reason: Reason = rng.choice(list(PHRASES))
    full = rng.random() < 0.6
    amount = order.paid if full else (order.paid / 2).quantize(Decimal("0.01"))
    how = "all of it back" if full else f"{amount} back (half of it)"
    utterance = (
        f"Hello, this is {shop.customer}. About my order {order.id} (the {order.item}): {PHRASES[reason]}. "
        f"I'd like {how}."
    )
    gold = [
        ToolCall(name="get_order", arguments={"order_id": order.id}),
        ToolCall(name="refund", arguments={"order_id": order.id, "reason": reason, "amount": str(amount)}),
    ]
    return TaskDraft(utterance=utterance, gold=gold, facts={"order": order.id, "reason": reason, "amount": amount})


def solved(shop: Shop, draft: TaskDraft) -> bool:
    """Exactly the asked order refunded, for the reason and the amount the customer gave, after it
    was looked up (a refund without the check is a lucky guess)."""
    refunded = [o for o in shop.orders.values() if o.refunded is not None]
    want = draft.facts
    checked = want["order"] in shop.looked_up
    return checked and [(o.id, o.reason, o.refunded) for o in refunded] == [
        (want["order"], want["reason"], want["amount"])
    ]


SUITE = register(
    ToolSuite(
        name="shop-refunds",
        tools=[
            ToolDef("get_order", "Look up one of the customer's orders.", GetOrderInput, get_order),
            ToolDef(
                "refund",
                "Refund (part of) an order.",
                RefundInput,
                refund,
                allowed={"order_id": Shop.order_ids},
            ),
        ],
        state=shop_for,
        task=task,
        success=solved,
        system="You are a shop's support agent. Act only through the tools. Check an order before refunding it.",
        n_tasks=24,
        seed_base=50_000,
        context=lambda shop: {"shop": shop},
    ),
    budget=6,
    description="A shop's refunds: get_order, refund; an order-id notation, state rules, a refusal (example plugin)",
)


def hint(violation: Violation, cut: int | None) -> str:
    """A condition of its own: one imperative line, naming the field and at most three values."""
    where = (violation.location or "the call").removeprefix("arguments.")
    options = violation.allowed[:3]
    tail = f" Use one of: {', '.join(options)}." if options else ""
    text = f"Fix {where}.{tail}"
    return text if cut is None else text[:cut]


register_condition("shop_hint", hint, "one line: fix FIELD, use one of up to three values (example plugin)")
