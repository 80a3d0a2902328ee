"""The TextWorld suites: `paper-textworld` (the paper's 50 games) and `textworld` (any parameters).

`tasks()` builds any game that is not cached yet, so a run fails at its start, naming the seed,
rather than in the middle; `make()` opens one game under the protocol the options choose.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path
from typing import Any

from envs import SUITES, get_suite, study
from envs.contract import Env, EpisodeContext, Task
from envs.errors import UnknownName
from envs.textworld import cache
from envs.textworld.engine import load_model
from envs.textworld.manifest import GameEntry, GenParams, Manifest
from envs.textworld.options import PaperOptions, PlayOptions, TextWorldOptions
from envs.textworld.plan import PlanEnv
from envs.textworld.step import StepEnv
from envs.textworld.veriharness.env import VeriharnessEnv


class _TextWorldSuite:
    # make() compiles or loads a game
    blocking = True
    name: str
    options_model: type[PlayOptions]

    def params(self, options: PlayOptions) -> list[GenParams]:
        raise NotImplementedError

    def build(
        self,
        options: PlayOptions,
        jobs: int | None = None,
        on_done: Callable[[GameEntry, bool], None] | None = None,
    ) -> Manifest:
        """Every game of the suite, generated where missing; the manifest of the suite."""
        games = cache.build(options.cache_path(), self.params(options), jobs=jobs, on_done=on_done)
        return Manifest(suite=self.name, textworld_version=version("textworld"), games=games)

    def manifest_path(self, options: PlayOptions) -> Path:
        """Where `games build` writes the manifest when not told: in the cache, one per suite."""
        return options.cache_path() / "suites" / self.name / "manifest.json"

    def tasks(self, options: PlayOptions) -> list[Task]:
        options = self._options(options)
        entries = self.build(options).games
        return [Task(suite=self.name, task_id=e.task_id, params={"seed": e.seed, **e.options}) for e in entries]

    def make(self, task: Task, options: PlayOptions, ctx: EpisodeContext) -> Env:
        options = self._options(options)
        params = GenParams(**{k: task.params[k] for k in ("seed", "rooms", "objects", "quest_length")})
        entry, files = cache.ensure(options.cache_path(), params)
        if options.protocol == "step":
            return StepEnv(entry, files.z8, options, ctx.budget)
        if options.protocol == "veriharness":
            return VeriharnessEnv(entry, load_model(files.json), options, ctx)
        return PlanEnv(entry, load_model(files.json), options, ctx.budget)

    def feedback_family(self, options: PlayOptions) -> str:
        """veriharness writes the artifact's repair lines (conditions.veriharness); plan and step the
        conditions' own messages."""
        return "veriharness" if self._options(options).protocol == "veriharness" else "message"

    def entry(self, seed: int, options: PlayOptions) -> GameEntry:
        return cache.ensure(options.cache_path(), self._params_for(seed, options))[0]

    def _params_for(self, seed: int, options: PlayOptions) -> GenParams:
        raise NotImplementedError

    def _options(self, options: PlayOptions | dict[str, Any] | None) -> PlayOptions:
        if options is None:
            return self.options_model()
        if isinstance(options, dict):
            return self.options_model.model_validate(options)
        return options


class PaperTextWorld(_TextWorldSuite):
    name = "paper-textworld"
    options_model = PaperOptions

    def params(self, options: PlayOptions) -> list[GenParams]:
        return [self._params_for(s, options) for s in options.seed_list()]

    def _params_for(self, seed: int, options: PlayOptions) -> GenParams:
        return GenParams(seed=seed, rooms=study.ROOMS, objects=study.OBJECTS, quest_length=study.QUEST_LENGTH)


class TextWorld(_TextWorldSuite):
    name = "textworld"
    options_model = TextWorldOptions

    def params(self, options: PlayOptions) -> list[GenParams]:
        return [self._params_for(s, options) for s in options.seed_list()]

    def manifest_path(self, options: PlayOptions) -> Path:
        slug = self._params_for(0, options).slug
        return options.cache_path() / "suites" / f"{self.name}-{slug}" / "manifest.json"

    def _params_for(self, seed: int, options: PlayOptions) -> GenParams:
        assert isinstance(options, TextWorldOptions)
        return GenParams(seed=seed, rooms=options.rooms, objects=options.objects, quest_length=options.quest_length)


def game_suite(name: str) -> _TextWorldSuite:
    """A registered suite that generates TextWorld games (what `games build` can build)."""

    def generates_games(declared: object) -> bool:
        return isinstance(declared, _TextWorldSuite) or (
            isinstance(declared, type) and issubclass(declared, _TextWorldSuite)
        )

    if name not in SUITES or not generates_games(SUITES.get(name).declared()):
        raise UnknownName("suite", name, [n for n in SUITES if generates_games(SUITES.get(n).declared())])
    suite = get_suite(name)
    assert isinstance(suite, _TextWorldSuite)
    return suite
