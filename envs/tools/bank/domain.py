"""Suite `tools-bank`: the seed's support line with four tools over a simulated bank."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envs.contract import ToolCall
from envs.tools.bank.backend import BankBackend
from envs.tools.bank.contract import (
    BLOCK_REASONS,
    BlockCardInput,
    DisputeStatusInput,
    FindOperationsInput,
    OpenDisputeInput,
    allowed_values,
)
from envs.tools.bank.phrasing import customer
from envs.tools.bank.world import BankWorld, World, make_bank_world
from envs.tools.case import Case, domain_case, today_line
from envs.tools.suite import ToolsSuite
from envs.tools.tooling import Tool

SYSTEM = (
    "You are a support agent of a retail bank, chatting with a customer. You act only through the tools "
    "you are given; a reply without a tool call is sent to the customer. If you need something the customer "
    "has not told you, ask them. A dispute about a repeated charge names the original (first) charge as "
    "original_operation_id."
)


def open_dispute_tool(
    world: World, run: Callable[[OpenDisputeInput], Any], enums: Callable[[], dict[str, list[str]]] = dict
) -> Tool:
    """The seed's tool: the whole of `bank-disputes`, and the write of a dispute in `tools-bank`."""
    return Tool(
        "open_dispute",
        "Open a dispute about one card operation.",
        OpenDisputeInput,
        run,
        write=True,
        slots={"card_last4": ("card",), "operation_date": ("date",), "amount": ("amount",), "reason": ("reason",)},
        allowed_for=lambda f: allowed_values(f, world),
        enums=enums,
    )


def tools(bank: BankBackend) -> list[Tool]:
    world = bank.world.base
    ops = [o.id for o in world.operations]
    cards = {"card_last4": list(bank.cards)}

    def allowed(f: str) -> list[str]:
        return bank.case_ids() if f == "case_id" else allowed_values(f, world)

    return [
        Tool(
            "find_operations",
            "List the customer's card operations, optionally filtered by dates and amount.",
            FindOperationsInput,
            bank.find_operations,
            allowed_for=allowed,
            enums=lambda: dict(cards),
        ),
        open_dispute_tool(world, bank.open_dispute, enums=lambda: {**cards, "original_operation_id": ops}),
        Tool(
            "block_card",
            "Block one of the customer's cards.",
            BlockCardInput,
            bank.block_card,
            write=True,
            slots={"card_last4": ("card",), "reason": ("block_reason",)},
            allowed_for=lambda f: list(BLOCK_REASONS) if f == "reason" else allowed(f),
            enums=lambda: dict(cards),
        ),
        Tool(
            "get_dispute_status",
            "Look up a dispute case.",
            DisputeStatusInput,
            bank.dispute_status,
            allowed_for=allowed,
            enums=lambda: {"case_id": bank.case_ids()},
        ),
    ]


def gold_calls(w: BankWorld) -> list[ToolCall]:
    op = w.base.op(w.base.target)
    dispute = {
        "card_last4": op.card_last4,
        "operation_date": op.day.isoformat(),
        "amount": str(op.amount),
        "reason": w.base.reason,
        "original_operation_id": w.base.original,
    }
    calls: list[ToolCall] = []
    if w.kind == "status":
        calls.append(ToolCall(name="get_dispute_status", arguments={"case_id": w.status_case}))
    if w.block_card is not None:
        calls.append(ToolCall(name="block_card", arguments={"card_last4": w.block_card, "reason": w.block_reason}))
    if w.kind in {"dispute", "fraud_block"}:
        calls.append(ToolCall(name="open_dispute", arguments=dispute))
    return calls


def build(seed: int) -> Case:
    w = make_bank_world(seed)
    bank = BankBackend(w)
    return domain_case(
        "bank",
        w,
        SYSTEM,
        f"{today_line(w.today)} Time zone: Europe/Moscow.",
        customer(w),
        tools=tools(bank),
        context={"today": w.today, "world": w.base, "bank": bank},
        state=bank.state,
        gold_calls=gold_calls(w),
        needs_read=("get_dispute_status",) if w.kind == "status" else (),
    )


class BankTools(ToolsSuite):
    name = "tools-bank"
    prefix = "bank"
    seed_base = 7_100_000
    build = staticmethod(build)
