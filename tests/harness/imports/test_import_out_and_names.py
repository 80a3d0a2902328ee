"""An import's --out and its model names (issue 66): a damaged run.json in --out (cut, a wrong
type, not UTF-8, a folder) is one line, exit 2, not a traceback; a model folder named with a tab, a
newline or an ESC sequence imports again (a regression of round 5: a pydantic traceback), under a
name with those written out; `--model agent:reader` would label a real model's transcripts an agent's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.harness.cli.invoke import invoke

GPT = Path(__file__).parents[2] / "data" / "bfcl_results" / "openai_gpt-oss-20b" / "multi_turn"
RESULT = "BFCL_v4_multi_turn_base_result.json"
LINE = (GPT / RESULT).read_text().splitlines()[0]


def _model(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / RESULT).write_text(LINE + "\n")
    return folder


DAMAGED = {
    "cut": (lambda p: p.write_text('{"sess'), "not valid JSON"),
    "wrong type": (lambda p: p.write_text('{"sessions": "abc"}'), "sessions: Input should be a valid list"),
    "not utf-8": (lambda p: p.write_bytes(b'\xff\xfe{"sessions": []}'), "not valid JSON ('utf-8' codec"),
    "a folder": (lambda p: p.mkdir(), "is a folder where the run keeps its run.json"),
}


@pytest.mark.extra("bfcl")
@pytest.mark.parametrize("case", sorted(DAMAGED))
def test_a_damaged_run_json_in_out_is_one_line(tmp_path, case):
    make, says = DAMAGED[case]
    model = _model(tmp_path / "m")
    run = tmp_path / "out" / "m--bfcl-base"
    run.mkdir(parents=True)
    make(run / "run.json")
    result, text = invoke("import", "bfcl", model, "--out", tmp_path / "out")
    assert result.exit_code == 2 and "Traceback" not in text, text
    lines = text.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {run / 'run.json'}") and says in lines[0], text
    assert not (run / "records.jsonl").exists()


@pytest.mark.extra("bfcl")
@pytest.mark.parametrize("name, shown", [("a\tb", "a\\tb"), ("a\nb", "a\\nb"), ("a\x1b[31mb", "a\\u001b[31mb")])
def test_a_model_folder_named_with_control_characters_imports(tmp_path, name, shown):
    _model(tmp_path / "in" / name)
    result, text = invoke("import", "bfcl", tmp_path / "in", "--out", tmp_path / "out")
    assert result.exit_code == 0 and "Traceback" not in text, text
    assert "\x1b" not in text and f"recorded as {shown}" in text, text
    (record,) = [json.loads(x) for x in (tmp_path / "out" / f"{shown}--bfcl-base" / "records.jsonl").open()]
    assert record["model"] == shown


def test_a_reference_agents_name_is_no_imported_models(tmp_path):
    _model(tmp_path / "m")
    result, text = invoke("import", "bfcl", tmp_path / "m", "--model", "agent:reader", "--out", tmp_path / "out")
    assert result.exit_code == 2 and "names a reference agent" in text and "Traceback" not in text, text
    assert not (tmp_path / "out").exists()
