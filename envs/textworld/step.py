"""The step protocol: native tool calls, one game command per call, on a running game.

The game runs on the Z-machine (the observations are the game's own text) and keeps its state
between calls. A call is checked against the current state by the tool's input model before it
reaches the game, so a rejected call changes nothing. Codes: `unknown_tool`, `no_action`,
`game_over`, and those of the input models (`invalid_action`, `missing`, `extra_forbidden`,
`string_type`, `string_too_long`, ...), with `location` = `arguments.<name>`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from envs.contract import Accepted, Action, Opening, Outcome, TextAnswer, ToolCall, Violation
from envs.textworld.manifest import GameEntry
from envs.textworld.options import PlayOptions
from envs.textworld.prompts import step_messages
from envs.textworld.tools import Tool, call_for, derive_tools
from envs.textworld.zmachine import ZSession, clean_feedback


class StepEnv:
    """One game under the step protocol. `reset()` starts the game; `close()` ends it."""

    # every step runs the Z-machine
    blocking = True

    def __init__(self, entry: GameEntry, z8: Path, options: PlayOptions, budget: int):
        self.entry, self.z8, self.options, self.budget = entry, Path(z8), options, budget
        self.session: ZSession | None = None
        self.tools: dict[str, Tool] = {}
        self.done = False
        self.commands: list[str] = []

    def reset(self) -> Opening:
        self.close()
        self.session = ZSession(self.z8)
        self.tools = derive_tools(list(self.session.state["command_templates"]))
        self.done = False
        self.commands = []
        return Opening(
            messages=step_messages(self.entry, self.budget),
            tools=[t.spec() for t in self.tools.values()],
            history="full",
            accepts=frozenset({"tool"}),
            echo_chars=self.options.echo_chars,
            budget_unit="tool_calls",
        )

    def submit(self, action: Action) -> Outcome:
        if self.session is None or self.session.closed:
            raise RuntimeError("submit() before reset() or after close() on a TextWorld step env")
        command = self._command(action)
        if isinstance(command, Violation):
            return command
        state = self.session.step(command)
        self.commands.append(command)
        won, lost = bool(state["won"]), bool(state["lost"])
        self.done = won or lost
        return Accepted(observation=clean_feedback(state["feedback"]), done=self.done, won=won, lost=lost)

    def _command(self, action: Action) -> str | Violation:
        """The game command a call stands for, or why it stands for none."""
        assert self.session is not None
        names = list(self.tools)
        if isinstance(action, TextAnswer):
            return Violation.no_action(action.text, names)
        if self.done:
            # the loop stops at the end of a game; this answers a direct caller
            return Violation.game_over(action.name)
        tool = self.tools.get(action.name)
        if tool is None:
            return Violation.unknown_tool(action.name, names)
        args = tool.validate(action.arguments, {"tool": tool, "admissible": self.session.admissible})
        if isinstance(args, Violation):
            return args
        return tool.command(args.model_dump(by_alias=True))

    def reference(self) -> list[Action]:
        """The walkthrough, one tool call per command (after reset(): the tools come from the game)."""
        calls: list[Action] = []
        for i, command in enumerate(self.entry.walkthrough):
            call = call_for(self.tools, command)
            if call is None:
                raise ValueError(f"walkthrough command {command!r} of game {self.entry.seed} matches no tool")
            calls.append(ToolCall(name=call[0], arguments=call[1], id=f"call_{i}"))
        return calls

    def record_extra(self) -> dict[str, Any]:
        return {"protocol": "step", "action": "command", "game_seed": self.entry.seed, "commands": list(self.commands)}

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
