"""The three tool suites share one shape: seeded tasks of a domain behind `ToolsEnv`."""

from __future__ import annotations

import functools

from pydantic import BaseModel

from envs.contract import EpisodeContext, Task
from envs.tools.case import Case
from envs.tools.env import Builder, ToolsEnv
from envs.tools.faults import FaultPlan
from envs.tools.options import ToolsOptions


@functools.lru_cache(maxsize=100_000)
def _describe(build: Builder, seed: int) -> tuple[str, str]:
    case = build(seed)
    return case.kind, case.dialogue


class ToolsSuite:
    # make() builds a seeded world in microseconds
    blocking = False
    name: str
    prefix: str
    seed_base: int
    options_model = ToolsOptions

    @staticmethod
    def build(seed: int) -> Case:  # overridden by each domain
        raise NotImplementedError

    def _builder(self) -> Builder:
        return type(self).build

    def tasks(self, options: BaseModel) -> list[Task]:
        assert isinstance(options, ToolsOptions)
        out = []
        for i in range(options.n_tasks):
            seed = self.seed_base + i
            kind, dialogue = _describe(self._builder(), seed)
            plan = FaultPlan.draw(seed, options.faults)
            params = {"seed": seed, "kind": kind, "dialogue": dialogue, "fault": plan.kind if plan else None}
            out.append(Task(suite=self.name, task_id=f"{self.prefix}-{i:04d}", params=params))
        return out

    def make(self, task: Task, options: BaseModel, ctx: EpisodeContext) -> ToolsEnv:
        assert isinstance(options, ToolsOptions)
        return ToolsEnv(task, options, self._builder(), fault_shape=ctx.sets("fault_shape"))

    def feedback_family(self, options: BaseModel) -> str:
        return "message"
