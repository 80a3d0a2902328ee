"""Reference agents, chosen like models with `--model agent:NAME`: one registry, keyed by name.

They play through the same loop, records and reports as a model, and are named so that no
report can take them for one (`agent:` names; model_id "... reference agent: no model, no
tokens"). What each one's success means is in docs/conditions.md, `ceiling`.
"""

from __future__ import annotations

from envs.errors import UserError
from envs.registry import Registry
from harness.agents.base import PREFIX, GoldAgent, NoReference, ReferenceAgent, reference_of
from harness.agents.random_agent import RandomAgent
from harness.agents.reader import ReaderAgent
from harness.agents.stubborn import StubbornAgent

AGENTS: Registry[type[ReferenceAgent]] = Registry("reference agent")


def register_agent(name: str, agent: type[ReferenceAgent]) -> type[ReferenceAgent]:
    """Add a reference agent; its name starts with `agent:`, so that no report takes it for a model."""
    if not name.startswith(PREFIX):
        raise UserError(f"a reference agent's name starts with {PREFIX!r}, got {name!r}")
    if not (isinstance(agent, type) and issubclass(agent, ReferenceAgent)):
        raise UserError(f"reference agent {name!r} must be a subclass of harness.agents.ReferenceAgent")
    return AGENTS.register(name, agent)


for _name, _agent in (
    ("agent:gold", GoldAgent),
    ("agent:reader", ReaderAgent),
    ("agent:random", RandomAgent),
    ("agent:stubborn", StubbornAgent),
):
    register_agent(_name, _agent)


def is_agent(name: str) -> bool:
    return name.startswith(PREFIX)


def get_agent(name: str) -> ReferenceAgent:
    return AGENTS.get(name)()


__all__ = ["AGENTS", "NoReference", "ReferenceAgent", "get_agent", "is_agent", "reference_of", "register_agent"]
