"""The known solution of a tool task, as the actions an agent would send, one per model turn.

It is what a careful agent does: ask the customer for every withheld slot (one message naming
each, in the customer's order), confirm a corrected value, make the gold calls, and meet the
seeded fault the way the output contract says it should be met (a transient fault: wait for
`retry_after` seconds, then send the same call again; a permanent one: stop and tell the
customer). A task whose gold is "no change" ends with a message to the customer.
"""

from __future__ import annotations

from envs.contract import Action, TextAnswer, ToolCall
from envs.tools.case import Case, State
from envs.tools.faults import FaultPlan

REPORT = {
    "ru": "Сервис сейчас недоступен для этой операции; передаю обращение сотруднику.",
    "en": "The service refused this operation; I am handing your request to a colleague.",
}
DONE = {"ru": "Готово, вот результат проверки.", "en": "Done: here is what I found."}


def reference(case: Case, gold: State, plan: FaultPlan | None) -> list[Action]:
    customer = case.customer
    out: list[Action] = []
    for slot in customer.withheld:
        out.append(TextAnswer(text=f"? {', '.join(customer.words[slot])}"))
    c = customer.correction
    if c is not None:
        out.append(TextAnswer(text=f"{c.value} ({', '.join((*c.value_words, *customer.words[c.slot]))})?"))
    writes = {t.name for t in case.tools if t.write}
    faulted = False
    for i, call in enumerate(case.gold_calls):
        out.append(call.model_copy(update={"id": f"call_{i}"}))
        if plan is None or faulted or call.name not in writes:
            continue
        faulted = True  # the fault fires on the first write that passes the contract
        if plan.permanent:
            out.append(TextAnswer(text=REPORT[customer.lang]))
            return out
        if plan.retry_after:
            out.append(ToolCall(name="wait", arguments={"seconds": plan.retry_after}, id=f"wait_{i}"))
        out.append(call.model_copy(update={"id": f"retry_{i}"}))
    if gold == case.state():
        out.append(TextAnswer(text=DONE[customer.lang]))
    return out
