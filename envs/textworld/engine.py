"""TextWorld's own rule engine, without an interpreter: the fast replay path of the plan protocol.

TextWorld computes a game's admissible commands in Python from the game's logic (the applicable
actions of the world state), also when the game runs on the Z-machine; this module does the same
from the game's .json. Wins and losses are decided as the compiled game decides them: after every
command, a quest whose win condition holds is completed for good, the game is won once every
quest is completed, and lost as soon as a fail condition holds. (TextWorld's GameProgression also
calls a quest failed when it judges it unfinishable; the compiled game does not, so neither do we.)
Equality with the Z-machine is checked over the paper suite by tests/envs/textworld/test_engine.py.
A replay starts from a copy of the initial state, so no game start is paid per plan.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path

from textworld.generator.game import Game
from textworld.generator.inform7 import Inform7Game
from textworld.logic import Action, State

# TextWorld parses a game's logic with one process-wide tatsu parser, which is not thread-safe:
# two games loaded at once in worker threads broke each other's parse (IndexError, TypeError
# inside tatsu). Every load of a game file, here and in `zmachine`, holds this lock.
GAME_LOAD_LOCK = threading.Lock()


class NotAdmissible(LookupError):
    """The command is not one of the admissible commands of the current state."""


class GameModel:
    """One game's rules, loaded once per process."""

    def __init__(self, json_path: Path):
        self.path = Path(json_path)
        self.game = Game.load(str(self.path))
        self._i7 = Inform7Game(self.game)
        self._rules = list(self.game.kb.rules.values())
        self._constants = self.game.kb.types.constants_mapping
        self._quests = [q for q in self.game.quests if not q.optional]
        self._initial_state = self.game.world.state.copy()
        self.initial_admissible, self._initial_actions = self.commands(self._initial_state)

    def commands(self, state: State) -> tuple[list[str], dict[str, Action]]:
        """Admissible commands in TextWorld's order (it sorts and dedups them), and the action of
        each; a command shared by two actions maps to the first, as TextWorld's own engine does."""
        actions = list(state.all_applicable_actions(self._rules, self._constants))
        by_command: dict[str, Action] = {}
        for command, action in zip(self._i7.gen_commands_from_actions(actions), actions, strict=True):
            by_command.setdefault(command, action)
        return sorted(by_command), by_command

    def start(self) -> Replay:
        return Replay(self)


class Replay:
    """A play-through from the initial state."""

    def __init__(self, model: GameModel):
        self.model = model
        self.state = model._initial_state.copy()
        self.admissible, self._actions = model.initial_admissible, model._initial_actions
        self.moves = 0
        self._completed = [False] * len(model._quests)
        self.lost = False

    def step(self, command: str) -> None:
        action = self._actions.get(command)
        if action is None:
            raise NotAdmissible(f"{command!r} is not admissible after {self.moves} moves")
        self.state.apply(action)
        self.moves += 1
        self.admissible, self._actions = self.model.commands(self.state)
        for i, quest in enumerate(self.model._quests):
            if not self._completed[i] and any(e.is_triggering(self.state) for e in quest.win_events):
                self._completed[i] = True
            if any(e.is_triggering(self.state) for e in quest.fail_events):
                self.lost = True

    @property
    def won(self) -> bool:
        completable = [done for done, q in zip(self._completed, self.model._quests, strict=True) if q.win_events]
        return bool(completable) and all(completable) and not self.lost

    @property
    def score(self) -> int:
        return sum(q.reward for done, q in zip(self._completed, self.model._quests, strict=True) if done)


@lru_cache(maxsize=256)
def _load(path: str, stamp: tuple[int, int]) -> GameModel:
    return GameModel(Path(path))


def load_model(json_path: Path) -> GameModel:
    """A process-wide cached GameModel; a rewritten file is loaded again."""
    st = Path(json_path).stat()
    with GAME_LOAD_LOCK:
        return _load(str(Path(json_path).resolve()), (st.st_mtime_ns, st.st_size))
