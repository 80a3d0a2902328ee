"""A fork point is a failed call, not a whole answer: the repair judged is the failed call's, an
answer in text repairs nothing, accepted is not progressed, and a BFCL source's protocol bounds
its forks (harness.fork, harness.recording). Sources are imports of BFCL result lines written
here in the format of other pipelines' files (calls only), so each answer's calls are chosen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from results.load import read_records
from tests.harness.cli.invoke import invoke

# base_11 starts in /temp (file1.txt, file2.txt); its ground truth is ls(a=True), then a post
PWD = {"pwd": "{}"}
BAD_CD = {"cd": '{"folder": "nowhere"}'}
LS = {"ls": '{"a": true}'}
TWEET = {"post_tweet": '{"content": "file1.txt, file2.txt", "tags": ["#fileshowcase"]}'}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("points")
    folder = root / "files" / "pipeline"
    folder.mkdir(parents=True)
    # one answer of two calls: the first succeeds, the second fails
    entry = {"id": "multi_turn_base_11", "result": [[[PWD, BAD_CD], [LS]], [[TWEET]]]}
    (folder / "BFCL_v4_multi_turn_base_result.json").write_text(json.dumps(entry) + "\n")
    result, text = invoke("import", "bfcl", folder, "--out", root / "imp")
    assert result.exit_code == 0, text
    return root / "imp" / "pipeline--bfcl-base"


def _fork(source: Path, out: Path, *args: str) -> dict[tuple[str, str], dict]:
    result, text = invoke("fork", source, "--conditions", "raw,allowed_json", "--out", out, *args)
    assert result.exit_code == 0, text
    rows, _ = read_records(out)
    return {(r["model"], r["condition"]): r for r in rows}


@pytest.mark.extra("bfcl")
def test_the_fork_point_is_the_failed_call_within_its_answer(source, tmp_path):
    forks = _fork(source, tmp_path / "f", "--model", "agent:stubborn")
    for r in forks.values():
        assert r["fork"].endswith(":0.1")  # answer 0, its second call
        assert (r["fork_of"]["call"], r["fork_of"]["within"], r["fork_of"]["tool"]) == (0, 1, "cd")
        # the stubborn agent resends the failed call, not the answer's first (which succeeded)
        assert r["calls"][0]["tools"] == ["cd"] and r["repaired_next"] is False and r["progressed"] is False


@pytest.mark.extra("bfcl")
def test_a_repair_is_an_accepted_call_of_the_failed_tool_and_progress_a_reference_call(source, tmp_path):
    forks = _fork(source, tmp_path / "f", "--model", "agent:reader")
    shown = forks[("agent:reader", "allowed_json")]
    first = shown["calls"][0]
    repaired = any(t == "cd" and o == "accepted" for t, o in zip(first["tools"], first["call_outcomes"], strict=True))
    assert shown["repaired_next"] is repaired
    # a cd the backend takes is no call of the task's reference (ls, then the post): accepted, not progressed
    assert shown["progressed"] is (shown["segment_solved"] is True)


@pytest.mark.extra("bfcl")
def test_an_answer_in_text_is_no_repair(tmp_path):
    from harness.recording import _repair
    from harness.types import CallLog

    text = CallLog(kind="action", prompt_tokens=1, completion_tokens=1, latency_s=0, prompt_words=1, outcome="accepted")
    other = text.model_copy(update={"tools": ["pwd"], "call_outcomes": ["accepted"], "call_signatures": ["s"]})
    same = text.model_copy(update={"tools": ["cd"], "call_outcomes": ["accepted"], "call_signatures": ["t"]})
    assert _repair(text, "cd") is None and _repair(other, "cd") is None and _repair(same, "cd") == "t"
    assert _repair(text, None) is not None  # a failed plan or command: an accepted answer repairs it
    # the failed call itself sent again, taken because another call changed the state: a retry
    assert _repair(same, "cd", failed="t") is None


@pytest.mark.extra("bfcl")
def test_a_bfcl_sources_forks_keep_its_20_steps_a_turn_and_one_budget_row(source, tmp_path):
    forks = _fork(source, tmp_path / "f", "--model", "agent:stubborn")
    for r in forks.values():
        # the source's budget, whatever it had left at the point: report rows never split by it
        assert r["budget"] == 168
        # the stubborn agent is force-quit as BFCL would: 20 steps in the turn, the replayed one included
        assert r["extra"]["force_quit"] is True and r["model_calls"] + r["prefix_calls"] == 21


@pytest.mark.extra("bfcl")
def test_the_sources_own_next_move_stands_beside_the_forks(source, tmp_path):
    _fork(source, tmp_path / "f", "--model", "agent:stubborn")
    result, text = invoke("report", tmp_path / "f", "--format", "json")
    assert result.exit_code == 0, text
    rows = json.loads(result.stdout)["forks"]
    (own,) = [r for r in rows if r["player"] is not None]
    # the imported model's own next answer was `ls`, not a repaired cd; it solved the entry
    assert (own["player"], own["confounded"], own["fork_points"]) == ("pipeline", True, 1)
    assert (own["repaired_next"], own["solved"]) == (0.0, 1.0)
    assert "player and feedback are confounded" in " ".join(invoke("report", tmp_path / "f")[1].split())


def test_a_player_forking_its_own_failures_is_contrasted_with_its_own_next_move(tmp_path):
    src = tmp_path / "src"
    result, text = invoke(
        "run",
        "--suite",
        "bank-disputes",
        "--tool-mode",
        "prompt",
        "--model",
        "agent:reader",
        "--conditions",
        "none",
        "--tasks",
        "8",
        "--out",
        src,
    )
    assert result.exit_code == 0, text
    _fork(src, tmp_path / "f", "--model", "agent:reader")
    rows = json.loads(invoke("report", tmp_path / "f", "--format", "json")[0].stdout)["forks"]
    own = [r for r in rows if r["player"] is not None]
    forks = {r["condition"]: r for r in rows if r["player"] is None}
    assert [o["confounded"] for o in own] == [False]
    # under `none` the reader repairs nothing; shown the allowed values it does: the contrast sees it
    assert own[0]["repaired_next"] == 0.0
    assert forks["allowed_json"]["vs_source"] == forks["allowed_json"]["repaired_next"] > 0
    # under raw it repairs 3 of 8, which 8 points cannot tell from 0 (McNemar's p 0.25): a null, said
    # with the effect those 8 points could have shown, larger than the one seen
    raw = forks["raw"]
    assert raw["vs_source"] == 3 / 8 and raw["vs_source_p"] == 0.25 and 3 / 8 < raw["vs_source_mde"] < 1
    text = " ".join(invoke("report", tmp_path / "f", env={"COLUMNS": "200"})[1].split())
    said = "agent:reader raw vs source's own: not significant at this size (p 0.2500); detectable with 80% power"
    assert said in text


@pytest.mark.extra("bfcl")
def test_an_interrupted_fork_reports_its_missing_cells(source, tmp_path):
    out = tmp_path / "f"
    _fork(source, out, "--model", "agent:stubborn,agent:reader")
    records = out / "records.jsonl"
    lines = records.read_text().splitlines()
    records.write_text("".join(line + "\n" for line in lines[:2]))  # as a kill would leave it
    result, text = invoke("report", out, "--format", "json")
    assert result.exit_code == 0, text
    gaps = json.loads(result.stdout)["gaps"]
    assert len(gaps) == 2 and {g["status"] for g in gaps} == {"not run"}


@pytest.mark.extra("bfcl")
def test_a_dry_run_splits_the_episodes_by_model_and_tells_the_embedded_models_time(source):
    result, text = invoke(
        "fork", source, "--model", "local,agent:reader", "--conditions", "raw,allowed_json", "--dry-run"
    )
    flat = " ".join(text.split())
    assert result.exit_code == 0, text
    assert "1 fork points, 4 episodes" in flat and "agent:reader: 2 episodes" in flat
    assert "local: 2 episodes, about 3 min at 80 s each" in flat


@pytest.mark.extra("bfcl")
def test_a_check_refuses_another_player_and_checks_an_imports_prefixes(source):
    result, text = invoke("fork", source, "--check", "--model", "agent:reader")
    assert result.exit_code == 2 and "drop --model" in " ".join(text.split())
    result, text = invoke("fork", source, "--check")
    flat = " ".join(text.split())
    assert result.exit_code == 0, text
    assert "1 fork points of the import rebuilt" in flat and "1 unverified (no log)" in flat
