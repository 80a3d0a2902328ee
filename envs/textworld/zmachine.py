"""A game running on the Z-machine (TextWorld's Jericho backend), with a lifetime we control.

Jericho loads a private copy of the Frotz interpreter library into this process for every running
game, so an unclosed game is a leaked interpreter. `ZSession.close()` frees it, a finalizer frees
it if a session is dropped unclosed, and `open_sessions()` lets tests check none are left.
"""

from __future__ import annotations

import re
import threading
import weakref
from pathlib import Path
from typing import Any

import textworld
from textworld import EnvInfos

from envs.textworld.engine import GAME_LOAD_LOCK

INFOS = EnvInfos(
    admissible_commands=True,
    description=True,
    inventory=True,
    objective=True,
    max_score=True,
    score=True,
    won=True,
    lost=True,
    command_templates=True,
    entities=True,
)

_lock = threading.Lock()
_open: set[int] = set()
_prompt_tail = re.compile(r"\n>[^\n]*$")
_blank_runs = re.compile(r"\n{3,}")
# what the interpreter asks after the story has ended; the agent cannot answer it
_end_question = re.compile(r"\n[^\n]*RESTART, RESTORE a saved game[^\n]*")


def clean_feedback(text: str) -> str:
    """The game's answer without the input prompt and status line the interpreter appends."""
    text = _end_question.sub("", _prompt_tail.sub("", text or ""))
    text = "\n".join(line.strip() for line in text.splitlines())
    return _blank_runs.sub("\n\n", text).strip()


def open_sessions() -> int:
    with _lock:
        return len(_open)


def _close(env: Any, token: int) -> None:
    try:
        env.close()
    finally:
        with _lock:
            _open.discard(token)


class ZSession:
    """One running game. `state` is TextWorld's GameState after the last command."""

    def __init__(self, z8: Path):
        with GAME_LOAD_LOCK:  # textworld.start parses the game's logic (see engine.GAME_LOAD_LOCK)
            env = textworld.start(str(z8), INFOS)
        token = id(env)
        with _lock:
            _open.add(token)
        # the finalizer must not reference self, or the session could never be collected
        self._finalizer = weakref.finalize(self, _close, env, token)
        self._env = env
        try:
            self.state = env.reset()
        except BaseException:
            self.close()
            raise

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def step(self, command: str) -> Any:
        if self.closed:
            raise RuntimeError("the game session is closed")
        self.state, _, _ = self._env.step(command)
        return self.state

    @property
    def admissible(self) -> list[str]:
        return list(self.state["admissible_commands"] or [])

    def close(self) -> None:
        self._finalizer()

    def __enter__(self) -> ZSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
