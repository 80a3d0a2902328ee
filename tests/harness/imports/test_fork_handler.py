"""A fork of an import, played by a served model, meets the handler and the sampling BFCL's runner
played the file with (run.json: `imported.bfcl_runner`): an FC file's fork sends the tools and BFCL's
temperature with no token cap, a prompting file's writes the calls in the text; a flag the user gives
still wins. The requests are those a scripted server received (tests/data/bfcl_results)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from envs.bfcl import data
from tests.harness.cli.invoke import invoke
from tests.scripted_server import Reply, ScriptedServer

DATA = Path(__file__).parents[2] / "data" / "bfcl_results"
GPT = "openai_gpt-oss-20b"  # FC: steps as native calls, `[{name: "<JSON>"}]`
QWEN = "Qwen_Qwen3-8B"  # prompting: steps as Python call text
PROMPTED = "prompted"  # gpt-oss-20b's base_11 as a prompting handler writes it (below): a fork point


def _as_prompting(step: list[dict[str, str]]) -> str:
    calls = [(n, json.loads(a)) for c in step for n, a in c.items()]
    return "[" + ", ".join(f"{n}({', '.join(f'{k}={v!r}' for k, v in a.items())})" for n, a in calls) + "]"


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    line = next(
        json.loads(line)
        for line in (DATA / GPT / "multi_turn" / "BFCL_v4_multi_turn_base_result.json").read_text().splitlines()
        if json.loads(line)["id"] == "multi_turn_base_11"
    )
    result = [[_as_prompting(s) if s else "Done." for s in turn] for turn in line["result"]]
    prompted = tmp_path_factory.mktemp("files") / PROMPTED
    prompted.mkdir()
    (prompted / "BFCL_v4_multi_turn_base_result.json").write_text(json.dumps({"id": line["id"], "result": result}))
    out = tmp_path_factory.mktemp("imp")
    result, text = invoke("import", "bfcl", DATA / GPT, DATA / QWEN, prompted, "--out", out)
    assert result.exit_code == 0, text
    return out


def _runner(run: Path) -> dict:
    return json.loads((run / "run.json").read_text())["sessions"][-1]["imported"]["bfcl_runner"]


def _first_request(run: Path, out: Path, *flags: str) -> dict:
    with ScriptedServer(lambda body: Reply(text="I cannot."), model="served") as server:
        result, text = invoke(
            "fork", run, "--model", "served", "--endpoint", server.url, "--conditions", "bfcl-native",
            "--budget", "1", "--no-preflight", "--out", out, *flags,
        )  # fmt: skip
        assert result.exit_code == 0, text
        assert server.requests, text
        return server.requests[0]


def test_the_import_records_how_bfcls_runner_played_each_file(imported):
    gpt, qwen = _runner(imported / f"{GPT}--bfcl-base"), _runner(imported / f"{QWEN}--bfcl-long-context")
    assert (gpt["handler"], gpt["tool_mode"]) == ("FC", "native")
    assert (qwen["handler"], qwen["tool_mode"]) == ("prompting", "prompt")
    assert gpt["decoding"] == qwen["decoding"] == {"temperature": data.TEMPERATURE, "top_p": None, "max_tokens": None}


def test_a_fork_of_an_fc_file_is_bfcls_fc_request(imported, tmp_path):
    body = _first_request(imported / f"{GPT}--bfcl-base", tmp_path / "fork")
    assert body["temperature"] == data.TEMPERATURE and body["tools"]
    assert not {"max_tokens", "top_p", "tool_choice"} & set(body), body.keys()  # the import's 512 and 0 gone
    hot = _first_request(imported / f"{GPT}--bfcl-base", tmp_path / "hot", "--temperature", "0.7")
    assert hot["temperature"] == 0.7  # the user's flag wins


def test_a_fork_of_a_prompting_file_is_bfcls_prompting_request(imported, tmp_path):
    body = _first_request(imported / f"{PROMPTED}--bfcl-base", tmp_path / "fork")
    assert "tools" not in body and body["temperature"] == data.TEMPERATURE and "max_tokens" not in body
    assert body["messages"][0]["role"] == "system" and "[func_name1(" in body["messages"][0]["content"]
