"""The tool suites as a whole: options, registry entries, schema views and their snapshots."""

import json

import pytest
from pydantic import ValidationError

import envs
from envs.contract import EpisodeContext, Task, Violation
from envs.tools.options import ToolsOptions
from envs.tools.snapshot import VIEWS, current, path_for, render, suites
from tests.envs.tools.tools_agents import call, find_env

TOOL_SUITES = ("tools-bank", "tools-travel", "tools-calendar")

REGENERATE = ".venv/bin/python -m envs.tools.snapshot"


def test_options_defaults_alias_and_unknown_keys():
    o = ToolsOptions()
    assert (o.n_tasks, o.contract, o.schema_view, o.fault_shape, o.faults) == (
        200,
        "normalizing",
        "open",
        "problem",
        0.25,
    )
    assert ToolsOptions(schema="enum").schema_view == "enum"
    assert ToolsOptions(faults=True).faults == 1.0
    dumped = ToolsOptions(schema="enum", fault_shape="raw").model_dump()
    assert dumped["schema"] == "enum" and ToolsOptions.model_validate(dumped) == ToolsOptions(
        schema="enum", fault_shape="raw"
    )
    for bad in ({"schema": "closed"}, {"contract": "lenient"}, {"fault_shape": "json"}, {"faults": 1.5}, {"n_task": 3}):
        with pytest.raises(ValidationError):
            ToolsOptions(**bad)


def test_registry_entries_name_their_suites_with_three_to_six_tools():
    for name in TOOL_SUITES:
        suite = envs.get_suite(name)
        assert suite.name == name and suite.options_model is ToolsOptions and envs.suite_entry(name).budget >= 8
        env = suite.make(suite.tasks(ToolsOptions(n_tasks=1))[0], ToolsOptions(), EpisodeContext(budget=4))
        domain_tools = [t for t in env.reset().tools if t.name != "wait"]
        assert 3 <= len(domain_tools) <= 6 and len(env.reset().tools) <= 6


def test_record_extra_is_safe_before_reset_and_records_the_options():
    suite = suites()[0]
    env = suite.make(
        Task(suite=suite.name, task_id="x", params={"seed": suite.seed_base}),
        ToolsOptions(schema="enum"),
        EpisodeContext(budget=4),
    )
    assert env.record_extra()["options"]["schema"] == "enum"
    env.reset()
    extra = env.record_extra()
    assert (
        extra["options"] == ToolsOptions(schema="enum").recorded()
        and extra["end"] is None
        and extra["domain"] == "bank"
    )


@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
@pytest.mark.parametrize("view", VIEWS)
def test_schema_snapshot_has_not_drifted(suite, view):
    path = path_for(suite, view)
    assert path.exists(), f"no schema snapshot at {path}; create it with `{REGENERATE}`"
    assert path.read_text(encoding="utf-8") == render(current(suite, view)), (
        f"the schema that {suite.name} sends to the model ({view} view) differs from {path.name}. "
        f"If the change is intended, regenerate the snapshots with `{REGENERATE}` and commit the diff."
    )


@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
def test_the_open_view_has_no_allowed_values_and_the_enum_view_has_the_states(suite):
    open_view = json.dumps(current(suite, "open"), ensure_ascii=False)
    enum_view = current(suite, "enum")
    assert '"enum"' not in open_view and '"const"' not in open_view
    options = ToolsOptions(schema="enum", n_tasks=1, faults=0.0)
    env = suite.make(suite.tasks(options)[0], options, EpisodeContext(budget=4))
    state_values = {
        "bank": lambda: env.case.context["bank"].cards,
        "travel": lambda: [f.number for f in env.case.context["travel"].flights],
        "calendar": lambda: ["Neva", "Europe/Moscow"],
    }
    env.reset()
    listed = json.dumps(enum_view, ensure_ascii=False)
    assert all(f'"{v}"' in listed for v in state_values[env.case.domain]())


@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
def test_both_views_reject_a_bad_call_with_the_same_violation(suite):
    outs = []
    for view in VIEWS:
        env = find_env(suite, ToolsOptions(schema=view, faults=0.0), dialogue="single")
        write = next(c for c in env.case.gold_calls if env.tools[c.name].write)
        bad = dict(write.arguments)
        field = next(iter(bad))
        bad[field] = "???"
        outs.append(env.submit(call(write.name, **bad)))
    assert isinstance(outs[0], Violation) and outs[0] == outs[1]


HOSTILE = [
    None,
    [],
    {},
    "",
    "x" * 2000,
    -1,
    10**20,
    1e308,
    True,
    "9999-12-31",
    "9999-12-31T23:59",
    "0000",
    "\x00",
    {"$ref": "#"},
    ["a", 1],
]


@pytest.mark.parametrize("suite", suites(), ids=lambda s: s.name)
def test_hostile_arguments_never_crash_a_tool(suite):
    """Model output is untrusted: every odd value in every argument is a Violation or an answer."""
    options = ToolsOptions(faults=0.0, n_tasks=2)
    for task in suite.tasks(options):
        env = suite.make(task, options, EpisodeContext(budget=4))
        env.reset()
        for tool in env.tools.values():
            base = next((dict(c.arguments) for c in env.case.gold_calls if c.name == tool.name), {})
            for field in tool.model.model_fields:
                for value in HOSTILE:
                    env.reset()
                    out = env.submit(call(tool.name, **{**base, field: value}))
                    assert out.__class__.__name__ in {"Violation", "Accepted"}
