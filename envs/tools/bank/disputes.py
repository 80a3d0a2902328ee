"""Suite `bank-disputes`: the seed's bank case, a configuration of the bank domain with one tool
(`open_dispute`), one message from the customer, no faults, and one call that ends the task."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from envs.contract import Accepted, Action, EpisodeContext, Opening, Outcome, Task, ToolCall, Violation
from envs.tools.bank.backend import DisputeService, gold, solved
from envs.tools.bank.domain import open_dispute_tool
from envs.tools.bank.phrasing import complaint
from envs.tools.bank.world import World, make_world

SEED_BASE = 7_000_000


class BankOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    n_tasks: int = Field(200, ge=1, le=100_000)
    # normalizing: the before phase repairs human notation; strict: it is rejected with feedback
    contract: Literal["normalizing", "strict"] = "normalizing"


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


class BankEnv:
    # microseconds of Python per call
    blocking = False

    def __init__(self, task: Task, options: BankOptions):
        self.seed = int(task.params["seed"])
        self.world = make_world(self.seed)
        self.options = options
        self.service = DisputeService()
        # through a lambda: reset() replaces the service
        self.tool = open_dispute_tool(self.world, lambda inp: self.service.open(inp))

    def reset(self) -> Opening:
        self.service = DisputeService()
        _, message = complaint(self.world, self.seed)
        return Opening(
            messages=[
                {"role": "system", "content": f"{SYSTEM}\n\n{statement(self.world)}"},
                {"role": "user", "content": message},
            ],
            # the schema with its static allowed values (the reasons), as the seed sent it
            tools=[self.tool.spec("enum")],
        )

    def submit(self, action: Action) -> Outcome:
        if not isinstance(action, ToolCall):
            return Violation.no_action(action.text)
        if action.name != self.tool.name:
            return Violation.unknown_tool(action.name, [self.tool.name])
        context: dict[str, Any] = {
            "today": self.world.today,
            "world": self.world,
            "normalize": self.options.contract == "normalizing",
        }
        inp = self.tool.validate(action.arguments, context)
        if isinstance(inp, Violation):
            return inp
        dispute = self.tool.run(inp)
        won = solved(self.service, self.world)
        observation = json.dumps({"status": "accepted", "case_id": dispute.case_id})
        return Accepted(observation=observation, done=True, won=won, lost=not won)

    def reference(self) -> list[Action]:
        """The one gold call, its values in the contract's canonical notation."""
        args = {k: str(v) for k, v in gold(self.world).items() if v is not None}
        return [ToolCall(name=self.tool.name, arguments=args, id="call_0")]

    def record_extra(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


class BankDisputes:
    # make() builds a seeded world in microseconds
    blocking = False
    name = "bank-disputes"
    options_model = BankOptions

    def tasks(self, options: BaseModel) -> list[Task]:
        assert isinstance(options, BankOptions)
        return [
            Task(suite=self.name, task_id=f"bank-{i:04d}", params={"seed": SEED_BASE + i})
            for i in range(options.n_tasks)
        ]

    def make(self, task: Task, options: BaseModel, ctx: EpisodeContext) -> BankEnv:
        assert isinstance(options, BankOptions)
        return BankEnv(task, options)

    def feedback_family(self, options: BaseModel) -> str:
        return "message"
