"""A result Python will not write as text is BFCL's error text, as BFCL's executor gives it (issue 66):
`power(base=10, exponent=5000)` returns an integer of 5,001 digits, over Python's 4,300 for a
conversion to text. BFCL converts inside its `try`, so the model is shown `Error during execution:
Exceeds the limit (4300 digits) ...` and goes on; the harness made the episode a harness error and
dropped it from N."""

import json
import time
from pathlib import Path

import pytest

from envs.contract import ToolCall
from tests.harness.cli.invoke import invoke

BIG = ToolCall(name="power", arguments={"base": 10, "exponent": 5000})


@pytest.mark.extra("bfcl")
def test_the_text_is_bfcls_own_executors():
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_utils import execute_multi_turn_func_call

    from envs.bfcl.backends import Backends

    theirs, _ = execute_multi_turn_func_call(["power(base=10, exponent=5000)"], {}, ["MathAPI"], "m", "t-66")
    backends = Backends(["MathAPI"], {}, long_context=False)
    try:
        shown, result, exc = backends.run(BIG)
        said, error = backends.says(BIG)
    finally:
        backends.close()
    assert theirs[0].startswith("Error during execution: Exceeds the limit (4300 digits)"), theirs
    assert shown == said == theirs[0] and error and isinstance(exc, ValueError) and result is None


@pytest.mark.extra("bfcl")
def test_an_imported_big_result_is_scored_as_bfcl_scores_it(tmp_path: Path):
    model = tmp_path / "m"
    model.mkdir()
    line = {"id": "multi_turn_base_31", "result": [["[power(base=10, exponent=5000)]", "done"], ["done"]]}
    (model / "BFCL_v4_multi_turn_base_result.json").write_text(json.dumps(line) + "\n")
    result, text = invoke("import", "bfcl", model, "--out", tmp_path / "out")
    assert result.exit_code == 0 and "Traceback" not in text, text
    run = tmp_path / "out" / "m--bfcl-base"
    (record,) = [json.loads(x) for x in (run / "records.jsonl").read_text().splitlines()]
    assert record["harness_error"] is None and record["success"] is False, record  # scored, in N
    told = "".join(p.read_text() for p in (run / "transcripts").iterdir())
    assert "Error during execution: Exceeds the limit (4300 digits) for integer string conversion" in told


@pytest.mark.extra("bfcl")
def test_a_call_past_the_memory_limit_is_a_harness_error_naming_the_limit(tmp_path: Path, monkeypatch):
    """Issue 66: `square_root(number=2, precision=10**10)` grew the sidecar to 4.6 GiB within the
    time limit (four at --concurrency 4). Its address space is bounded: the allocation fails at
    the bound and the episode is a harness error naming the call and the limit, never scored."""
    monkeypatch.setenv("REPAIR_HARNESS_COMPUTE_MEMORY_MIB", "512")
    model = tmp_path / "m"
    model.mkdir()
    line = {
        "id": "multi_turn_base_31",
        "result": [["[square_root(number=2, precision=10000000000)]", "done"], ["done"]],
    }
    (model / "BFCL_v4_multi_turn_base_result.json").write_text(json.dumps(line) + "\n")
    start = time.monotonic()
    result, text = invoke("import", "bfcl", model, "--out", tmp_path / "out")
    assert result.exit_code == 0 and "Traceback" not in text, text
    assert time.monotonic() - start < 60  # stopped at the bound, not at the 10 s time limit
    (record,) = [json.loads(x) for x in (tmp_path / "out" / "m--bfcl-base" / "records.jsonl").read_text().splitlines()]
    assert record["success"] is None, record
    said = (
        "MemoryLimit: BFCL's backend call square_root(number=2, precision=10000000000) needed more than 512 MiB "
        "of memory and was stopped (the limit on external code's memory, REPAIR_HARNESS_COMPUTE_MEMORY_MIB)"
    )
    assert record["harness_error"].startswith(said), record["harness_error"]
