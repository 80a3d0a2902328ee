"""Suite `bank-disputes`: the seed's bank case, a configuration of the bank domain with one tool
(`open_dispute`), one message from the customer, no faults, and one call that ends the task."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from envs.authoring import TaskDraft, ToolDef, ToolSuite
from envs.contract import ToolCall
from envs.tools.bank.backend import DisputeService, gold, solved
from envs.tools.bank.contract import OpenDisputeInput, allowed_values
from envs.tools.bank.phrasing import complaint
from envs.tools.bank.world import World, make_world

SEED_BASE = 7_000_000


SYSTEM = (
    "You are a support agent of a retail bank. You act only through the tools you are given. "
    "When the customer asks for a dispute, open it with one call of open_dispute, using the "
    "customer's statement below to find the operation. Reasons: duplicate (charged twice; give the "
    "id of the first, original charge as original_operation_id), fraud (the customer did not make "
    "it), not_received (paid, goods not received), wrong_amount (charged a different amount)."
)


def statement(world: World) -> str:
    rows = [f"Today is {world.today.isoformat()}. Customer's cards: {', '.join(world.cards)}.", "Recent operations:"]
    for o in world.operations:
        rows.append(f"- {o.id} | {o.at:%Y-%m-%d %H:%M} | card {o.card_last4} | {o.amount} RUB | {o.merchant}")
    return "\n".join(rows)


@dataclass
class Desk:
    """One task's backend: the customer's world (cards, operations) and the disputes opened."""

    world: World
    service: DisputeService = field(default_factory=DisputeService)


def _draft(seed: int, desk: Desk) -> TaskDraft:
    """The customer's complaint, and the one gold call in the contract's canonical notation."""
    _, message = complaint(desk.world, seed)
    args = {k: str(v) for k, v in gold(desk.world).items() if v is not None}
    return TaskDraft(utterance=message, gold=[ToolCall(name="open_dispute", arguments=args, id="call_0")])


def _open(desk: Desk, inp: OpenDisputeInput) -> dict[str, str]:
    return {"status": "accepted", "case_id": desk.service.open(inp).case_id}


OPEN_DISPUTE: ToolDef[Desk] = ToolDef(
    "open_dispute",
    "Open a dispute about one card operation.",
    OpenDisputeInput,
    _open,
    allowed={
        f: functools.partial(lambda f, desk: allowed_values(f, desk.world), f) for f in OpenDisputeInput.model_fields
    },
)

# the seed's case written with the authoring API (envs.authoring): what a user's suite is
BANK_DISPUTES = ToolSuite(
    name="bank-disputes",
    tools=[OPEN_DISPUTE],
    state=lambda seed: Desk(make_world(seed)),
    task=_draft,
    success=lambda desk, _draft: solved(desk.service, desk.world),
    system=lambda desk: f"{SYSTEM}\n\n{statement(desk.world)}",
    # one message from the customer, one call that ends the task
    ends="call",
    seed_base=SEED_BASE,
    task_prefix="bank",
    n_tasks=200,
    context=lambda desk: {"today": desk.world.today, "world": desk.world},
)
