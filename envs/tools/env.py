"""The episode of a tool task: dispatch, input contract, faults, the customer, and the verdict.

Every task is a conversation with a customer, so the environment reads text: a turn without a
tool call is a message to the customer, answered by the scripted customer (done=False).

When the episode ends (all judged on the backend state, never on the agent's words):
- a write leaves the state equal to the gold state and the required reads ran -> won;
- a write changes something the gold state does not -> lost (`diverged`; every write is a
  commitment: a dispute, a booking, a meeting notice reach people);
- a write that carries a value the customer has not revealed (`invented`), or a changed value
  the agent has not confirmed with the customer (`unconfirmed_change`) -> lost, even if valid;
- after a permanent fault (auth), any further backend call -> lost (`retried_permanent`); a
  message to the customer -> won if nothing diverged (`reported`);
- a task whose gold is "no change" (e.g. a status check that needs no action) ends with the first
  message to the customer once the required read ran (`answered`).
A fault the tool returns is an observation (Accepted, done=False), never a Violation.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable
from typing import Any

from envs.contract import Accepted, Action, Opening, Outcome, Task, TextAnswer, Violation
from envs.tools.case import Case, State, WaitInput, gold_state, wait_tool
from envs.tools.faults import FaultPlan, Transport
from envs.tools.options import ToolsOptions
from envs.tools.output import FaultShape, ok
from envs.tools.reference import reference
from envs.tools.slots import TRY_AGAIN
from envs.tools.tooling import Tool

Builder = Callable[[int], Case]


@functools.lru_cache(maxsize=4096)
def _gold(build: Builder, seed: int) -> State:
    """The gold state of a task (built on a fresh backend); states hold immutable values only."""
    return gold_state(build(seed))


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (str, list, dict)) and not value)


class ToolsEnv:
    # microseconds of Python per call
    blocking = False

    def __init__(self, task: Task, options: ToolsOptions, build: Builder, fault_shape: FaultShape | None = None):
        self.task, self.options, self.build = task, options, build
        # the output-contract conditions choose the shape; otherwise the suite option does
        self.fault_shape = fault_shape or options.fault_shape
        self.seed = int(task.params["seed"])
        self.plan = FaultPlan.draw(self.seed, options.faults)
        self.case: Case | None = None  # built by reset(), which the loop calls first

    @property
    def _case(self) -> Case:
        """The case of the episode: every call but `record_extra` comes after reset()."""
        assert self.case is not None, "reset() first"
        return self.case

    # -- the Env protocol --------------------------------------------------------------------

    def reset(self) -> Opening:
        self.case = self.build(self.seed)
        self.gold: State = _gold(self.build, self.seed)
        self.initial: State = self.case.state()
        self.transport = Transport(self.plan, self.case.service)
        self.tools: dict[str, Tool] = {t.name: t for t in self.case.tools}
        self.tools["wait"] = wait_tool(self._wait)
        self.end: str | None = None
        self.won = False
        self.ran: Counter[str] = Counter()
        self.invented: list[dict[str, Any]] = []
        self.unconfirmed = False
        self.retries = self.wasted = self.waited = 0
        self.recovered = False
        return Opening(
            messages=[{"role": "system", "content": self.case.system}, {"role": "user", "content": self.case.opening}],
            tools=[t.spec(self.options.schema_view) for t in self.tools.values()],
            accepts=frozenset({"tool", "text"}),
        )

    def submit(self, action: Action) -> Outcome:
        if self.end is not None:
            return Accepted(observation="The conversation has ended.", done=True, won=self.won, lost=not self.won)
        if isinstance(action, TextAnswer):
            return self._talk(action.text)
        tool = self.tools.get(action.name)
        if tool is None:
            return Violation.unknown_tool(action.name, list(self.tools))
        context = {**self._case.context, "normalize": self.options.contract == "normalizing"}
        if tool.name == "wait":
            inp = tool.validate(action.arguments, context)
            return inp if isinstance(inp, Violation) else Accepted(observation=ok(tool.run(inp)).text())
        if self.plan is not None and self.plan.permanent and self.transport.fired_at is not None:
            return self._retry_permanent(tool)
        attempt = self._inventions(tool, action.arguments) if tool.write else []
        inp = tool.validate(action.arguments, context)
        self.invented.extend(attempt)
        if isinstance(inp, Violation):
            return inp
        return self._execute(tool, inp, action.arguments, attempt)

    def reference(self) -> list[Action]:
        """The task's known solution (envs.tools.reference), from a case built afresh: the
        episode's own backend and customer are left alone."""
        return reference(self.build(self.seed), _gold(self.build, self.seed), self.plan)

    def close(self) -> None:
        pass

    # -- the backend call --------------------------------------------------------------------

    def _execute(self, tool: Tool, inp: Any, arguments: dict[str, Any], attempt: list[dict[str, Any]]) -> Outcome:
        after_fault = self.transport.fired_at is not None
        if after_fault and tool.name == self.transport.fired_on:
            self.retries += 1
        unconfirmed = tool.write and self._touches_pending(tool, arguments)
        try:
            self.transport.send(tool.name, tool.write)
        except Exception as exc:  # the output contract: a fault is an answer, never a crash
            if self.transport.hits > 1:
                self.wasted += 1
            return Accepted(observation=self.transport.output(exc, self.fault_shape).text())
        data = tool.run(inp)
        self.ran[tool.name] += 1
        if after_fault and tool.name == self.transport.fired_on:
            self.recovered = True
        observation = ok(data).text()
        if not tool.write:
            return Accepted(observation=observation)
        for entry in attempt:
            entry["reached_backend"] = True
        self.unconfirmed = self.unconfirmed or unconfirmed
        return self._judge(observation)

    def _judge(self, observation: str) -> Outcome:
        state = self._case.state()
        if any(e["reached_backend"] for e in self.invented):
            return self._finish(False, "invented", observation)
        if self.unconfirmed:
            return self._finish(False, "unconfirmed_change", observation)
        if self._diverged(state):
            return self._finish(False, "diverged", observation)
        if state == self.gold:
            return self._finish(self._reads_done(), "solved" if self._reads_done() else "unchecked", observation)
        return Accepted(observation=observation)

    def _retry_permanent(self, tool: Tool) -> Outcome:
        if tool.name == self.transport.fired_on:
            self.retries += 1
        self.wasted += 1
        try:
            self.transport.send(tool.name, tool.write)
        except Exception as exc:
            return self._finish(False, "retried_permanent", self.transport.output(exc, self.fault_shape).text())
        raise AssertionError("a permanent fault let a call through")

    def _wait(self, inp: WaitInput) -> dict[str, int]:
        self.transport.wait(inp.seconds)
        self.waited += inp.seconds
        return {"waited_s": inp.seconds, "clock_s": self.transport.clock}

    # -- the conversation --------------------------------------------------------------------

    def _talk(self, text: str) -> Outcome:
        if self.plan is not None and self.plan.permanent and self.transport.fired_at is not None:
            return self._finish(True, "reported", "")
        state = self._case.state()
        if state == self.gold == self.initial and self._reads_done():
            return self._finish(True, "answered", "")
        pending_retry = self.transport.fired_at is not None and not self.recovered
        customer = self._case.customer
        reply = customer.respond(text, idle=TRY_AGAIN[customer.lang] if pending_retry else None)
        return Accepted(observation=reply)

    def _inventions(self, tool: Tool, arguments: dict[str, Any]) -> list[dict[str, Any]]:
        customer = self._case.customer
        out = []
        for name, slots in tool.slots.items():
            if _empty(arguments.get(name)):
                continue  # an empty value claims nothing
            hidden = [s for s in slots if s in customer.withheld and not customer.store.revealed(s)]
            if hidden:
                out.append(
                    {
                        "tool": tool.name,
                        "field": name,
                        "slots": hidden,
                        "value": str(arguments[name])[:80],
                        "reached_backend": False,
                    }
                )
        return out

    def _touches_pending(self, tool: Tool, arguments: dict[str, Any]) -> bool:
        c = self._case.customer.correction
        if c is None or not c.pending:
            return False
        return any(c.slot in slots for name, slots in tool.slots.items() if not _empty(arguments.get(name)))

    # -- the verdict -------------------------------------------------------------------------

    def _diverged(self, state: State) -> bool:
        keys = set(state) | set(self.initial)
        return any(state.get(k) != self.gold.get(k) for k in keys if state.get(k) != self.initial.get(k))

    def _reads_done(self) -> bool:
        return all(self.ran[name] for name in self._case.needs_read)

    def _finish(self, won: bool, end: str, observation: str) -> Accepted:
        self.end, self.won = end, won
        return Accepted(
            observation=observation or f"The conversation is over ({end}).", done=True, won=won, lost=not won
        )

    def _fault_outcome(self) -> str:
        if self.plan is None:
            return "none"
        if self.transport.fired_at is None:
            return "not_reached"
        if self.plan.permanent:
            return {"retried_permanent": "retried_permanent", "reported": "reported"}.get(self.end or "", "unresolved")
        return "recovered" if self.recovered else "unresolved"

    def _recorded_options(self) -> dict[str, Any]:
        return {**self.options.recorded(), "fault_shape": self.fault_shape}

    def record_extra(self) -> dict[str, Any]:
        if self.case is None:
            return {"options": self._recorded_options(), "end": None}
        customer = self.case.customer
        c = customer.correction
        return {
            "domain": self.case.domain,
            "kind": self.case.kind,
            "dialogue": self.case.dialogue,
            "options": self._recorded_options(),
            "end": self.end,
            "state_matches_gold": self.case.state() == self.gold,
            "invented": self.invented,
            "invented_reached_backend": any(e["reached_backend"] for e in self.invented),
            "slots_withheld": list(customer.withheld),
            "slots_revealed": sorted(customer.store.values),
            "customer_turns": customer.turns,
            "correction": None
            if c is None
            else {"slot": c.slot, "value": c.value, "fired": c.fired, "confirmed": c.confirmed},
            "unconfirmed_change": self.unconfirmed,
            "fault": None if self.plan is None else {"kind": self.plan.kind, "retry_after": self.plan.retry_after},
            "fault_outcome": self._fault_outcome(),
            "fault_hits": self.transport.hits,
            "retries": self.retries,
            "wasted_calls": self.wasted,
            "waited_s": self.waited,
            "clock_s": self.transport.clock,
            "tool_runs": dict(self.ran),
        }
