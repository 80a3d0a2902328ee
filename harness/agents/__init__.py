"""Reference agents, chosen like models with `--model agent:NAME`: one table, keyed by name.

They play through the same loop, records and reports as a model, and are named so that no
report can take them for one (`agent:` names; model_id "... reference agent: no model, no
tokens"). What each one's success means is in docs/conditions.md, `ceiling`.
"""

from __future__ import annotations

from envs.errors import UnknownName
from harness.agents.base import PREFIX, GoldAgent, NoReference, ReferenceAgent, reference_of
from harness.agents.random_agent import RandomAgent
from harness.agents.reader import ReaderAgent
from harness.agents.stubborn import StubbornAgent

AGENTS: dict[str, type[ReferenceAgent]] = {
    "agent:gold": GoldAgent,
    "agent:reader": ReaderAgent,
    "agent:random": RandomAgent,
    "agent:stubborn": StubbornAgent,
}


def is_agent(name: str) -> bool:
    return name.startswith(PREFIX)


def get_agent(name: str) -> ReferenceAgent:
    if name not in AGENTS:
        raise UnknownName("reference agent", name, list(AGENTS))
    return AGENTS[name]()


__all__ = ["AGENTS", "NoReference", "ReferenceAgent", "get_agent", "is_agent", "reference_of"]
