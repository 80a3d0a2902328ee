"""The four BFCL multi-turn suites: 200 entries each, read from the installed `bfcl-eval`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from envs.bfcl import data
from envs.contract import Env, EpisodeContext, Task


class BfclOptions(BaseModel):
    """BFCL's entries are played as they are; `protocol` says whose rules an answer's calls meet:
    `harness` (our contract checks each call before it runs; a rejection ends the answer) or
    `bfcl` (the leaderboard's: every call runs on the backends, 20 steps a turn), envs.bfcl.env."""

    model_config = ConfigDict(extra="forbid")
    protocol: Literal["harness", "bfcl"] = "harness"


class BfclSuite:
    blocking = False
    options_model = BfclOptions
    name: str
    category: str

    def __init__(self) -> None:
        data.package_dir()  # a missing package is a clear error here, when the spec loads

    def tasks(self, options: BaseModel) -> list[Task]:
        return [
            Task(suite=self.name, task_id=entry_id.removeprefix("multi_turn_"), params={"entry_id": entry_id})
            for entry_id in data.entry_ids(self.category)
        ]

    def make(self, task: Task, options: BaseModel, ctx: EpisodeContext) -> Env:
        from envs.bfcl.env import BfclEnv  # the backends' modules load with the first episode

        assert isinstance(options, BfclOptions)
        return BfclEnv(task, self.category, options.protocol, ctx.tool_mode, ctx.decoding)

    def feedback_family(self, options: BaseModel) -> str:
        return "message"

    def run_defaults(self, options: BaseModel) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
        """What `protocol=bfcl` plays with where the run sets nothing (harness.spec): BFCL's
        sampling (`bfcl generate`'s temperature, no top_p, no token cap) and its bound (turns and
        21 steps a turn: no budget of ours cuts an entry); what the run must choose itself (BFCL's
        FC handler or its prompting handler); and what it may not set (what BFCL's runner has no
        such thing as: our reading of calls in the text, a constrained decoding)."""
        assert isinstance(options, BfclOptions)
        if options.protocol != "bfcl":
            return {}, {}, {}
        decoding = dict(data.RUNNER_DECODING)
        choose = {
            "tool_mode": "protocol=bfcl plays BFCL's FC handler (--tool-mode native: the server's tool calls) or "
            "its prompting handler (--tool-mode prompt: calls written in the text); choose one"
        }
        refuse = {
            "text_calls": "--text-calls does not apply under protocol=bfcl: BFCL's FC handler reads native calls "
            "only, and a call written in the text ends the turn",
            "constrain": "--constrain does not apply under protocol=bfcl: BFCL's runner asks for no constrained "
            "decoding",
        }
        return {"decoding": decoding, "budgets": [data.most_steps()]}, choose, refuse


def _suite(category: str) -> type[BfclSuite]:
    name = f"bfcl-{category.replace('_', '-')}"
    return type(f"Bfcl_{category}", (BfclSuite,), {"name": name, "category": category})


Base, MissParam, MissFunc, LongContext = (_suite(c) for c in data.CATEGORIES)
