"""An import's input files are opened as what they claim (issue 57): a FIFO, a device, UTF-16, a
0xFF byte, an encoded surrogate, JSON nested 100,000 deep, in a result or a score file, are one
line naming the file (exit 2), never a traceback, a MemoryError or a hang."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.imports.inputs import InputError, text_lines
from tests.harness.cli.invoke import invoke

GPT = Path(__file__).parents[2] / "data" / "bfcl_results" / "openai_gpt-oss-20b" / "multi_turn"
RESULT = "BFCL_v4_multi_turn_base_result.json"
LINE = (GPT / RESULT).read_text().splitlines()[0]


def _fifo(path: Path) -> None:
    os.mkfifo(path)


CASES = {
    "utf-16": (lambda p: p.write_text(LINE + "\n", encoding="utf-16"), "is UTF-16 text"),
    "0xff": (lambda p: p.write_bytes(LINE.encode() + b"\n\xff\n"), "line 2 is not UTF-8 (byte 0xff"),
    "surrogate": (
        lambda p: p.write_bytes(b'{"id": "a", "result": "\xed\xa0\x80"}\n'),
        "line 1 is not UTF-8 (byte 0xed",
    ),
    "deep": (lambda p: p.write_text("[" * 100_000 + "]" * 100_000 + "\n"), "nested deeper than can be read"),
    "fifo": (_fifo, "is a FIFO, not a file"),
    "device": (lambda p: p.symlink_to("/dev/zero"), "is a character device, not a file"),
}


@pytest.mark.extra("bfcl")
@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", ["result", "score"])
def test_an_input_file_that_is_not_what_it_claims_is_one_line_and_exit_2(tmp_path, case, kind):
    make, says = CASES[case]
    model = tmp_path / "m"
    model.mkdir()
    if kind == "score":
        (model / RESULT).write_text(LINE + "\n")
    make(model / RESULT.replace("result", kind))
    result, text = invoke("import", "bfcl", model, "--out", tmp_path / "out")
    assert result.exit_code == 2 and says in text and "Traceback" not in text, text
    assert f"multi_turn_base_{kind}.json" in text  # the file is named
    assert not list(tmp_path.glob("out/*/records.jsonl"))  # nothing recorded


def test_a_line_longer_than_the_bound_is_named(tmp_path):
    f = tmp_path / "f.json"
    f.write_bytes(b"x" * 100 + b"\n")
    with pytest.raises(InputError, match="line 1 is longer than 10 bytes"):
        list(text_lines(f, max_line_bytes=10))
    assert [n for n, _ in text_lines(f)] == [1]


@pytest.mark.parametrize("model", ["org/name", "../../x", "m ", "a\x1bb"])
def test_a_model_that_is_no_folder_name_is_one_line(tmp_path, model):
    """Issue 57: `--model org/name` nested the run directory a level deeper, `../../x` wrote
    outside --out."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / RESULT).write_text(LINE + "\n")
    result, text = invoke("import", "bfcl", tmp_path / "m", "--model", model, "--out", tmp_path / "out")
    assert result.exit_code == 2 and "--model" in text and "Traceback" not in text, text
    assert not any(p.name == "records.jsonl" for p in tmp_path.rglob("*"))
