"""agent:reader reads a condition of one's own only when taught its wording (register_reader)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.harness.cli.invoke import invoke
from tests.registries import no_plugin_left  # noqa: F401  (autouse: each test's plugins are gone after it)

TAUGHT = Path(__file__).parents[2] / "data" / "plugins" / "nearest_condition.py"


def _solved(tmp_path: Path, plugin: Path, name: str) -> dict[str, int]:
    out = tmp_path / plugin.stem
    played = ["--suite", "bank-disputes", "--model", "agent:reader", "--conditions", f"{name},allowed_json"]
    result, text = invoke("run", *played, "--tasks", "10", "--plugin", plugin, "--out", out)
    assert result.exit_code == 0, text
    rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return {c: sum(bool(r["success"]) for r in rows if r["condition"] == c) for c in (name, "allowed_json")}


def test_the_reader_repairs_under_a_custom_wording_once_a_parser_is_registered(tmp_path):
    untaught = tmp_path / "untaught.py"
    # the same wording under a name of its own (one process holds both plugins), with no parser
    source = TAUGHT.read_text().replace('register_reader("nearest", read_nearest)', "")
    untaught.write_text(source.replace('register_condition("nearest"', 'register_condition("nearest-untaught"'))
    assert _solved(tmp_path, untaught, "nearest-untaught") == {"nearest-untaught": 0, "allowed_json": 10}
    # with its parser: the reader repairs as under the built-in compositions
    assert _solved(tmp_path, TAUGHT, "nearest") == {"nearest": 10, "allowed_json": 10}
