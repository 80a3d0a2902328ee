"""What the agent is told at the start of a game. Our own wording; the information follows the
paper's plan prompt: rules, objective, first room, inventory, command limit, output form, budget."""

from __future__ import annotations

from typing import Any

from envs.textworld.manifest import GameEntry

PLAN_SYSTEM = "You play text adventure games. Reply with a single JSON object and no other text."

PLAN_SCHEMA_EXAMPLE = '{"answer": {"commands": ["first command", "second command"]}}'

STEP_SYSTEM = (
    "You play a text adventure game by calling tools. Each tool call is one game command; the "
    "game's reply comes back as the tool result."
)


def _game_context(entry: GameEntry) -> str:
    return (
        f"Objective:\n{entry.objective.strip()}\n\n"
        f"Where you start:\n{entry.description.strip()}\n\n"
        f"Inventory:\n{entry.inventory.strip()}"
    )


def plan_messages(entry: GameEntry, max_commands: int, budget: int) -> list[dict[str, Any]]:
    user = (
        "Write a plan for this text adventure: the list of game commands that completes the objective.\n\n"
        "Rules:\n"
        "- The plan is played from the start of the game, one command after the other.\n"
        f"- The plan holds at most {max_commands} commands.\n"
        "- Each command must be one the game accepts at that moment, spelt the way the game spells it "
        '(plain lower-case commands such as "go north" or "open box").\n'
        "- The first command the game does not accept ends the attempt as a failure.\n"
        f"- You have {budget} attempts. After a failed attempt you are told what went wrong with it.\n\n"
        f"{_game_context(entry)}\n\n"
        "Answer with one JSON object of exactly this form, with no other text:\n"
        f"{PLAN_SCHEMA_EXAMPLE}\n"
        f'"commands" is a list of 1 to {max_commands} strings.'
    )
    return [{"role": "system", "content": PLAN_SYSTEM}, {"role": "user", "content": user}]


def step_messages(entry: GameEntry, budget: int) -> list[dict[str, Any]]:
    user = (
        "Complete the objective of this text adventure.\n\n"
        "Rules:\n"
        "- Play by calling the tools, one game command per call. The game keeps its state between calls.\n"
        f"- You have {budget} tool calls in total; a rejected call counts too.\n"
        "- The game ends when the objective is complete.\n\n"
        f"{_game_context(entry)}"
    )
    return [{"role": "system", "content": STEP_SYSTEM}, {"role": "user", "content": user}]
