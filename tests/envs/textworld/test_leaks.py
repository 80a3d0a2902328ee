"""400 episodes that end normally, by an error, by cancellation or by being dropped leave no game
interpreter, child process or file descriptor behind."""

from __future__ import annotations

import asyncio
import gc
import json

import psutil
import pytest

from envs.contract import Accepted, EpisodeContext, Task, TextAnswer, ToolCall
from envs.textworld.options import PaperOptions
from envs.textworld.plan import PlanEnv
from envs.textworld.step import StepEnv
from envs.textworld.suite import PaperTextWorld
from envs.textworld.tools import call_for
from envs.textworld.zmachine import open_sessions

pytestmark = pytest.mark.slow
EPISODES = 400
SUITE = PaperTextWorld()
STEP, PLAN = PaperOptions(protocol="step"), PaperOptions()


def footprint() -> dict[str, int]:
    me = psutil.Process()
    frotz = {m.path for m in me.memory_maps() if "libfrotz" in m.path}
    return {
        "children": len(me.children(recursive=True)),
        "fds": me.num_fds(),
        "frotz_libraries": len(frotz),
        "threads": me.num_threads(),
        "sessions": open_sessions(),
    }


async def cancelled_episode(task: Task) -> None:
    """The runner's pattern: make, play, and close in `finally`; the task is cancelled mid-play."""
    env = None

    async def play():
        nonlocal env
        env = await asyncio.to_thread(SUITE.make, task, STEP, EpisodeContext(budget=4))
        try:
            await asyncio.to_thread(env.reset)
            await asyncio.sleep(60)
        finally:
            await asyncio.to_thread(env.close)

    t = asyncio.create_task(play())
    while env is None or env.session is None:
        await asyncio.sleep(0.001)
    t.cancel()
    with pytest.raises(asyncio.CancelledError):
        await t


def step_episode(task: Task, kind: int) -> None:
    env = SUITE.make(task, STEP, EpisodeContext(budget=4))
    assert isinstance(env, StepEnv)
    if kind == 3:  # dropped without close(): the finalizer frees the game
        env.reset()
        env.submit(ToolCall(name="look"))
        return
    try:
        env.reset()
        env.submit(ToolCall(name="go", arguments={"direction": "nowhere"}))
        if kind == 1:
            raise ValueError("an error in the middle of an episode")
        for command in env.entry.walkthrough:
            found = call_for(env.tools, command)
            assert found is not None, command
            out = env.submit(ToolCall(name=found[0], arguments=found[1]))
        assert isinstance(out, Accepted) and out.won
    except ValueError:
        pass
    finally:
        if kind != 3:
            env.close()


def test_no_interpreter_leaks_after_400_episodes() -> None:
    tasks = SUITE.tasks(PLAN)
    gc.collect()
    before = footprint()
    for i in range(EPISODES):
        task = tasks[i % len(tasks)]
        kind = i % 4
        if kind == 2:
            asyncio.run(cancelled_episode(task))
        else:
            step_episode(task, kind)
        plan_env = SUITE.make(task, PLAN, EpisodeContext(budget=4))
        assert isinstance(plan_env, PlanEnv)
        plan_env.reset()
        answer = TextAnswer(text=json.dumps({"answer": {"commands": plan_env.entry.walkthrough}}))
        out = plan_env.submit(answer)
        assert isinstance(out, Accepted) and out.won
        plan_env.close()
        if i % 100 == 99:
            gc.collect()
            assert footprint()["frotz_libraries"] <= before["frotz_libraries"] + 1, i
    gc.collect()
    after = footprint()
    assert after["sessions"] == 0
    assert after["children"] == before["children"]
    assert after["frotz_libraries"] <= before["frotz_libraries"]
    assert after["fds"] <= before["fds"]
    assert after["threads"] <= before["threads"] + 8  # asyncio.to_thread's pool threads may linger
