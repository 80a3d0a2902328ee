"""A result file without its `inference_log` is decoded as BFCL's handler decoded it: the same calls
step for step, and so the same turns, as the log says BFCL ran (tests/data/bfcl_results/
meta-llama_Llama-3.1-8B-Instruct-FC/logged-lines: real lines with their logs, source in its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.imports.bfcl_format import Entry, Undecodable, read_entry

LINES = Path(__file__).parents[2] / "data" / "bfcl_results" / "meta-llama_Llama-3.1-8B-Instruct-FC" / "logged-lines"


def _read(line: str, logged: bool) -> Entry:
    data = json.loads(line)
    if not logged:
        del data["inference_log"]
    return read_entry(json.dumps(data), 1, None)


def _calls(entry: Entry) -> list[list[list[tuple[str, dict]]]]:
    return [[[(c.name, c.arguments) for c in step.calls] for step in turn] for turn in entry.turns]


def _lines() -> dict[str, str]:
    return {json.loads(line)["id"]: line for f in sorted(LINES.iterdir()) for line in f.read_text().splitlines()}


@pytest.mark.parametrize("entry_id", ["multi_turn_base_1", "multi_turn_base_94", "multi_turn_miss_func_4"])
def test_without_its_log_an_entry_plays_the_calls_bfcl_logged(entry_id):
    line = _lines()[entry_id]
    logged, bare = _read(line, logged=True), _read(line, logged=False)
    assert logged.logged and not bare.logged
    assert _calls(bare) == _calls(logged)
    assert [len(t) for t in bare.turns] == [len(t) for t in logged.turns]  # each turn ends where BFCL's did


def test_llamas_calls_separated_by_semicolons_are_calls():
    # `{...}; {...}`: Llama 3.1's handler splits on `;` (it was read as text: the turn ended at once)
    turn = _read(_lines()["multi_turn_base_1"], logged=False).turns[0]
    assert [c.name for c in turn[0].calls] == ["find", "ls"]
    assert not turn[1].calls and len(turn) == 2


def test_a_dict_no_handler_reads_as_a_call_ends_the_turn():
    # `{"engineState": ...}` (a backend's answer, written back): BFCL's decoder fails, the turn ends
    turn = _read(_lines()["multi_turn_base_94"], logged=False).turns[2]
    assert turn[1].text.startswith('{"engineState"') and not turn[1].calls


def test_dicts_joined_by_a_bar_are_the_call_pythons_eval_merges():
    turn = _read(_lines()["multi_turn_miss_func_4"], logged=False).turns[2]
    assert " | " in turn[0].text
    assert [(c.name, c.arguments) for c in turn[0].calls] == [("echo", {"content": "None"})]


def test_arguments_bfcls_eval_computed_are_refused_not_computed():
    # `"round(" + str(6000.0) + ")"`: read with its log (BFCL's decoding); without it, never evaluated
    line = _lines()["multi_turn_base_44"]
    assert _read(line, logged=True).turns[2][0].calls[0].arguments["content"] == "round(6000.0)"
    with pytest.raises(Undecodable, match="would compute"):
        _read(line, logged=False)
