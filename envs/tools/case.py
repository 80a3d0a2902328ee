"""What a domain builds for one task: the backend, its tools, the customer and the gold calls.

A domain is a function `build(seed) -> Case`; it is called once for the episode and once more on
a fresh backend to execute the gold calls, whose resulting state is the gold state (the success
check is that the episode's backend state equals it, exactly).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from typing import Any, Literal, Protocol

from pydantic import Field

from envs.contract import ToolCall, Violation
from envs.tools.fields import Seconds
from envs.tools.slots import Customer
from envs.tools.tooling import Tool, ToolInput

State = dict[str, Any]


@dataclass
class Case:
    domain: str
    kind: str
    dialogue: Literal["single", "slots"]
    service: str  # host name of the simulated service (fault URLs and problem types)
    system: str
    opening: str  # the customer's first message
    customer: Customer
    tools: list[Tool]
    context: dict[str, Any]  # validation context: reference dates and the backend
    state: Callable[[], State]  # a flat snapshot of the backend: entity key -> comparable value
    gold_calls: list[ToolCall]
    # read tools that must have run before the task counts as solved (a write without the check
    # it depends on is a lucky guess)
    needs_read: tuple[str, ...] = ()


class DomainWorld(Protocol):
    """What a domain's world says of its task that a case repeats."""

    @property
    def kind(self) -> str: ...

    @property
    def dialogue(self) -> Literal["single", "slots"]: ...


def today_line(today: date) -> str:
    """The date a task's system prompt gives the agent, so that "yesterday" has one meaning."""
    return f"Today is {today.isoformat()} ({today:%A})."


def domain_case(
    domain: str,
    world: DomainWorld,
    system: str,
    clock: str,
    talk: tuple[Customer, str],
    *,
    tools: list[Tool],
    context: dict[str, Any],
    state: Callable[[], State],
    gold_calls: list[ToolCall],
    needs_read: tuple[str, ...] = (),
) -> Case:
    """A domain's case: the domain names its service's host, the world gives the kind and the
    dialogue, the clock (the task's today) follows the system prompt, `talk` is the customer and
    their first message. Every domain builds it so, so that the three cannot drift apart."""
    customer, opening = talk
    return Case(
        domain=domain,
        kind=world.kind,
        dialogue=world.dialogue,
        service=f"api.{domain}.example",
        system=f"{system}\n\n{clock}",
        opening=opening,
        customer=customer,
        tools=tools,
        context=context,
        state=state,
        gold_calls=gold_calls,
        needs_read=needs_read,
    )


def gold_state(case: Case, normalize: bool = True) -> State:
    """Execute the gold calls on the case's (fresh) backend; raise if one of them is rejected."""
    tools = {t.name: t for t in case.tools}
    for call in case.gold_calls:
        tool = tools[call.name]
        inp = tool.validate(call.arguments, {**case.context, "normalize": normalize})
        if isinstance(inp, Violation):
            raise ValueError(f"gold call {call.name} of a {case.domain} task is rejected: {inp.message}")
        tool.run(inp)
    return case.state()


class WaitInput(ToolInput):
    seconds: Seconds = Field(ge=1, le=600, description="How many seconds to let pass")


def wait_tool(run: Callable[[WaitInput], Any]) -> Tool:
    return Tool(
        name="wait",
        description="Let the given number of seconds pass before your next call. Time here is simulated.",
        model=WaitInput,
        run=run,
        allowed_for=lambda f: ["1..600"] if f == "seconds" else [],
    )
