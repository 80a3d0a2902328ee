"""Time to validate and replay a 4-command plan on the paper suite: fresh game start vs ours.

    .venv/bin/python benchmarks/textworld_replay.py [--repeats 5] [--subprocess]

The plan is `look`, `inventory`, then the game's 2-command walkthrough, so all 4 commands are
checked against the admissible commands and played, and the last one wins.
- fresh start: what a replay costs on a newly started game: `textworld.start` (the Z-machine),
  reset, admissible-command check and step per command, close. The interpreter's one-time setup in
  this process is paid before timing starts.
- fresh process (--subprocess, first 10 games): the same in a new Python process per plan, as the
  paper's artifact did.
- ours: `PlanEnv.submit` end to end (JSON parse, checks, replay from a copy of the initial state
  on TextWorld's rule engine). `ours, first call` is each game's first replay in the process,
  which also loads the game's rules.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from envs.contract import Accepted, EpisodeContext, Task, TextAnswer
from envs.textworld import cache
from envs.textworld.options import PaperOptions
from envs.textworld.suite import PaperTextWorld
from envs.textworld.zmachine import ZSession

_CHILD = """
import sys, textworld
from envs.textworld.zmachine import INFOS
env = textworld.start(sys.argv[1], INFOS); state = env.reset()
for c in sys.argv[2:]:
    assert c in state["admissible_commands"]
    state, _, _ = env.step(c)
assert state["won"]; env.close()
"""


def fresh_start(z8: Path, plan: list[str]) -> float:
    t = time.perf_counter()
    with ZSession(z8) as game:
        for command in plan:
            if command not in game.admissible:
                raise AssertionError(command)
            state = game.step(command)
        assert state["won"]
    return time.perf_counter() - t


def fresh_process(z8: Path, plan: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run([sys.executable, "-c", _CHILD, str(z8), *plan], check=True)
    return time.perf_counter() - t


def stats(xs: list[float]) -> tuple[float, float]:
    ms = sorted(x * 1000 for x in xs)
    return statistics.median(ms), ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5, help="timed replays per game and method")
    ap.add_argument("--subprocess", action="store_true", help="also time a fresh process per plan (10 games)")
    a = ap.parse_args()
    console = Console()
    suite, options = PaperTextWorld(), PaperOptions()
    games = suite.build(options).games
    files = {g.seed: cache.game_files(options.cache_path(), g.params()) for g in games}
    plans = {g.seed: ["look", "inventory", *g.walkthrough] for g in games}
    fresh_start(files[games[0].seed].z8, plans[games[0].seed])  # one-time interpreter setup, untimed

    times: dict[str, list[float]] = {"fresh start": [], "ours, first call": [], "ours": []}
    for g in games:
        task = Task(suite=suite.name, task_id=g.task_id, params={"seed": g.seed, **g.options})
        answer = TextAnswer(text=json.dumps({"answer": {"commands": plans[g.seed]}}))
        for i in range(a.repeats + 1):
            t = time.perf_counter()
            env = suite.make(task, options, EpisodeContext(budget=4))
            out = env.submit(answer)
            env.close()
            times["ours, first call" if i == 0 else "ours"].append(time.perf_counter() - t)
            assert isinstance(out, Accepted) and out.won, (g.seed, out)
        for _ in range(a.repeats):
            times["fresh start"].append(fresh_start(files[g.seed].z8, plans[g.seed]))
    if a.subprocess:
        times["fresh process"] = [fresh_process(files[g.seed].z8, plans[g.seed]) for g in games[:10]]

    table = Table(title=f"validate + replay a 4-command plan, {len(games)} paper games")
    for col in ("method", "samples", "median ms", "p95 ms"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for name, xs in times.items():
        med, p95 = stats(xs)
        table.add_row(name, str(len(xs)), f"{med:.2f}", f"{p95:.2f}")
    console.print(table)
    speed = stats(times["fresh start"])[0] / stats(times["ours"])[0]
    console.print(f"ours is {speed:.1f}x faster than a fresh start (median)")
    console.print("peer: the fresh start (and --subprocess's fresh process) replays as the paper's artifact did")


if __name__ == "__main__":
    main()
