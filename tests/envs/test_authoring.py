"""The authoring API (envs.authoring): a suite written in a few lines plays like the built-ins."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from envs.authoring import Refused, ServiceFault, TaskDraft, ToolDef, ToolSuite, field_members
from envs.contract import Accepted, EpisodeContext, TextAnswer, ToolCall, Violation


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class PaintInput(BaseModel):
    model_config = ConfigDict(extra="forbid")
    wall: str
    colour: Colour
    finish: Literal["matte", "gloss"] = "matte"


@dataclass
class House:
    walls: list[str]
    painted: dict[str, str] = field(default_factory=dict)
    down: int = 0  # calls the paint service fails before it answers


def paint(house: House, inp: PaintInput) -> dict[str, str]:
    if house.down:
        house.down -= 1
        raise ServiceFault(503, "The paint service is down", retry_after=5)
    if inp.wall not in house.walls:
        raise Refused("unknown_wall", "there is no such wall", "wall", inp.wall)
    house.painted[inp.wall] = inp.colour.value
    return {"wall": inp.wall, "colour": inp.colour.value}


def suite(ends: str = "success", faults: bool = False, down: int = 0) -> ToolSuite[House]:
    return ToolSuite(
        name="paint",
        tools=[ToolDef("paint", "Paint a wall.", PaintInput, paint, allowed={"wall": lambda h: list(h.walls)})],
        state=lambda seed: House(walls=[f"wall-{seed}", f"wall-{seed + 1}"], down=down),
        task=lambda seed, h: TaskDraft(
            f"Paint {h.walls[0]} red.", [ToolCall(name="paint", arguments={"wall": h.walls[0], "colour": "red"})]
        ),
        success=lambda h, d: h.painted == {h.walls[0]: "red"},
        system="You paint walls.",
        ends=ends,  # type: ignore[arg-type]
        n_tasks=5,
        faults=faults,
    )


def env_of(s: ToolSuite[House], **ctx: object):
    options = s.options_model()
    env = s.make(s.tasks(options)[0], options, EpisodeContext(budget=4, **ctx))  # type: ignore[arg-type]
    return env, env.reset()


def test_field_members_reads_literals_and_enums():
    assert field_members(PaintInput, "colour") == ["red", "blue"]
    assert field_members(PaintInput, "finish") == ["matte", "gloss"]
    assert field_members(PaintInput, "wall") == [] and field_members(PaintInput, "nope") == []


def test_the_options_model_has_the_suites_task_count_and_no_fault_shape_unless_it_has_faults():
    assert suite().options_model().n_tasks == 5 and "fault_shape" not in suite().options_model.model_fields
    assert suite(faults=True).options_model().fault_shape == "problem"
    assert len(suite().tasks(suite().options_model(n_tasks=3))) == 3


def test_the_reference_wins_and_the_opening_shows_the_tool_schema_with_its_members():
    env, opening = env_of(suite())
    (tool,) = opening.tools
    assert tool.name == "paint" and tool.parameters["properties"]["finish"]["enum"] == ["matte", "gloss"]
    (call,) = env.reference()
    out = env.submit(call)
    assert isinstance(out, Accepted) and out.done and out.won


def test_a_rejection_is_a_violation_with_allowed_values_from_the_type_and_from_the_state():
    env, _ = env_of(suite())
    v = env.submit(ToolCall(name="paint", arguments={"wall": "wall-0", "colour": "green"}))
    assert isinstance(v, Violation) and v.location == "arguments.colour" and v.allowed == ["red", "blue"]
    v = env.submit(ToolCall(name="paint", arguments={"wall": "attic", "colour": "red"}))
    assert isinstance(v, Violation) and v.code == "unknown_wall" and v.allowed == ["wall-0", "wall-1"]
    assert v.observed == "attic" and "Traceback" in v.raw
    v = env.submit(ToolCall(name="spray", arguments={}))
    assert isinstance(v, Violation) and v.code == "unknown_tool" and v.allowed == ["paint"]


@pytest.mark.parametrize("shape", ["raw", "problem"])
def test_a_service_fault_is_an_answer_in_the_shape_the_condition_sets(shape):
    class Sets:
        def sets(self, key: str) -> str | None:
            return shape if key == "fault_shape" else None

    env, _ = env_of(suite(faults=True, down=1), condition=Sets())
    out = env.submit(env.reference()[0])
    assert isinstance(out, Accepted) and not out.done
    body = json.loads(out.observation)
    assert body["status"] == "error"
    if shape == "problem":
        assert body["error"]["status"] == 503 and body["error"]["retry_after"] == 5 and body["error"]["retryable"]
    else:
        assert body["error"] == "ServiceFault: 503 The paint service is down"
    assert env.submit(env.reference()[0]).won and env.record_extra() == {"service_faults": 1}


def test_how_an_episode_ends():
    env, opening = env_of(suite(ends="call"))
    out = env.submit(ToolCall(name="paint", arguments={"wall": "wall-1", "colour": "red"}))
    assert out.done and out.lost  # one call ends the task, right or wrong
    assert opening.accepts == frozenset({"tool"}) and env.submit(TextAnswer(text="done")).code == "no_action"
    env, opening = env_of(suite(ends="answer"))
    assert "text" in opening.accepts
    assert not env.submit(env.reference()[0]).done  # the check holds, but the agent has not said so
    assert env.submit(TextAnswer(text="Painted.")).won


def test_a_suite_needs_distinctly_named_tools():
    tool = ToolDef("paint", "Paint.", PaintInput, paint)
    with pytest.raises(ValueError, match="distinct names"):
        ToolSuite("x", [tool, tool], lambda s: House([]), lambda s, h: TaskDraft("", []), lambda h, d: True, "")
