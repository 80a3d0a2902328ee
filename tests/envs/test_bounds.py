"""Ranges, lengths and patterns as allowed values: a pydantic constraint's rejection carries the
field's bounds (`Violation.bounds`), the `allowed` part renders them in every form, and
agent:reader reads them back (issue 50)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from envs.contract import Bounds, Violation
from envs.validation import TypedTool
from harness.agents.reader import Mistake, read_bounds, repair
from tests.conditions.said import said
from tests.harness.cli.invoke import invoke
from tests.registries import no_plugin_left  # noqa: F401  (autouse: each test's plugins are gone after it)

PLUGIN = Path(__file__).parents[1] / "data" / "plugins" / "vm_disks.py"


class Disk(BaseModel):
    disk_gb: int = Field(ge=10, le=2048)
    label: str = Field("a", max_length=5, pattern=r"^[a-z]+$")


class DiskTool(TypedTool):
    name, model = "create_disk", Disk


def test_a_rejected_bound_carries_every_bound_of_its_field():
    v = DiskTool().validate({"disk_gb": 4096}, {})
    assert isinstance(v, Violation) and v.code == "less_than_equal" and v.allowed == []
    assert v.bounds == Bounds(ge=10, le=2048) and v.model_dump(mode="json")["bounds"] == {"ge": 10, "le": 2048}
    v = DiskTool().validate({"disk_gb": 20, "label": "ABC"}, {})
    assert v.bounds == Bounds(max_length=5, pattern="^[a-z]+$")


def test_a_violation_without_bounds_keeps_its_old_form():
    v = DiskTool().validate({"disk_gb": "x"}, {})
    assert v.bounds is None and "bounds" not in v.model_dump(mode="json")


V = Violation(
    code="less_than_equal", location="arguments.disk_gb", observed=4096, message="m", bounds=Bounds(ge=10, le=2048)
)


@pytest.mark.parametrize(
    ("condition", "shows"),
    [
        ("allowed_prose", "The allowed values are: >= 10 and <= 2048."),
        ("allowed_json", '"allowed": [], "bounds": {"ge": 10, "le": 2048}'),
        ("retry+code+location+allowed@problem", '"allowed": [], "bounds": {"ge": 10, "le": 2048}}]'),
        ("loc_obs", None),
        ("raw", None),
    ],
)
def test_the_allowed_part_renders_the_bounds_in_every_form(condition, shows):
    text = said(condition, V)
    if shows is None:
        assert "2048" not in text and "bounds" not in text
    else:
        assert shows in text


@pytest.mark.parametrize("condition", ["allowed_prose", "allowed_json", "retry+code+location+allowed@problem"])
def test_the_reader_moves_a_number_into_the_bounds_it_is_shown(condition):
    text = said(condition, V)
    assert read_bounds(text)["arguments.disk_gb"] == {"ge": 10.0, "le": 2048.0}
    mistake = Mistake(0, "out_of_range", "arguments.disk_gb", "disk_gb", -1, None, 4096)
    assert repair(mistake, text) == (True, 2048)
    assert repair(mistake, said("loc_obs", V)) == (False, 4096)


def test_a_forked_out_of_range_failure_is_repaired_under_allowed_compositions_only(tmp_path):
    src, fork = tmp_path / "src", tmp_path / "fork"
    played = ["--suite", "vm-disks", "--model", "agent:oversize", "--conditions", "none,allowed_json"]
    result, text = invoke("run", *played, "--plugin", PLUGIN, "--out", src)
    assert result.exit_code == 0, text
    conditions = "loc_obs,allowed_prose,allowed_json,retry+code+location+allowed@problem"
    result, text = invoke(
        "fork", src, "--plugin", PLUGIN, "--model", "agent:reader", "--conditions", conditions, "--out", fork
    )
    assert result.exit_code == 0, text
    rows = [json.loads(line) for line in (fork / "records.jsonl").read_text().splitlines()]
    repaired = {c: [r["repaired_next"] for r in rows if r["condition"] == c] for c in conditions.split(",")}
    assert repaired["loc_obs"] and not any(repaired["loc_obs"])
    assert all(all(repaired[c]) for c in conditions.split(",")[1:])
    # each record says whether its rejections' bounds were shown
    played = [json.loads(line) for line in (src / "records.jsonl").read_text().splitlines()]
    shown = {r["condition"]: r["extra"]["bounds"]["shown"] for r in played if "bounds" in r["extra"]}
    assert shown == {"none": False, "allowed_json": True}


def test_a_plugin_with_gold_calls_as_dicts_fails_at_registration_in_one_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text(
        PLUGIN.read_text()
        .replace('gold=[ToolCall(name="create_disk", arguments=', "gold=[dict(arguments=")
        .replace('"disk_gb": size})]', '"disk_gb": size}, name="create_disk")]')
    )
    result, text = invoke("suites", "--plugin", bad)
    assert result.exit_code == 2 and "Traceback" not in text
    assert "TaskDraft.gold[0] is a dict; it must be an envs.contract.ToolCall" in " ".join(text.split())
