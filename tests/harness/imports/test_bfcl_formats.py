"""`import bfcl` on the handlers' formats and under BFCL's protocol: what the model was shown is
what the record says (tests/data/bfcl_results: real lines and hand-written ones, sources in its
README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from results.dynamics import episode_columns
from tests.harness.cli.invoke import invoke

DATA = Path(__file__).parents[2] / "data" / "bfcl_results"


def _records(run: Path) -> dict[str, dict]:
    return {r["task_id"]: r for r in map(json.loads, (run / "records.jsonl").read_text().splitlines())}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("formats")
    names = ("Qwen_Qwen3-8B", "gpt-4o-2024-08-06-FC", "handwritten-anthropic", "deepseek-ai_DeepSeek-V3-0324")
    result, text = invoke("import", "bfcl", *(DATA / n for n in names), "--out", out)
    assert result.exit_code == 0, text
    return out


@pytest.mark.extra("bfcl")
def test_content_blocks_and_every_call_of_a_step_after_a_failed_one(imported):
    run = imported / "handwritten-anthropic--bfcl-base"
    record = _records(run)["base_11"]
    # asked in content blocks: the same questions, so played; every call answered as logged
    assert record["success"] is True
    assert record["extra"]["replay"] == {
        "calls": 4,
        "same_text": 4,
        "logged": True,
        "faithful": True,
        "divergence": None,
    }
    turns = json.loads((run / record["transcript"]).read_text())["turns"]
    replies = [m["content"] for m in turns[1]["messages"] if m["role"] == "tool"]
    # the failed cd, the call BFCL could not evaluate (never evaluated here), and the ls after both
    assert replies[1] == "Error during execution: name 'true' is not defined"
    assert replies[2] == '{"current_directory_content": ["file1.txt", "file2.txt"]}'
    assert record["extra"]["bfcl"]["executed"][0] == [
        {"name": "cd", "arguments": {"folder": "temp"}},
        {"name": "ls(a=true)", "arguments": {}},  # BFCL's checker gets a call its eval fails on
        {"name": "ls", "arguments": {"a": True}},
    ]


@pytest.mark.extra("bfcl")
def test_a_prompting_handlers_system_prompt_is_not_a_question(imported):
    records = _records(imported / "Qwen_Qwen3-8B--bfcl-long-context")
    assert sorted(records) == ["long_context_12", "long_context_4"]
    assert records["long_context_12"]["extra"]["replay"]["faithful"] is True


@pytest.mark.extra("bfcl")
def test_a_replay_that_departs_from_the_log_is_named_and_its_failures_after_it_never_counted(imported):
    # a v3 file's cd error reads otherwise on v4's backends: the first call already departs
    record = _records(imported / "Qwen_Qwen3-8B--bfcl-long-context")["long_context_4"]
    divergence = record["extra"]["replay"]["divergence"]
    assert record["extra"]["replay"]["faithful"] is False
    assert (divergence["call"], divergence["answer"], divergence["cause"]) == (0, 0, "answered with another text")
    assert "No such directory" in divergence["there"] and "No such file or directory" in divergence["here"]
    assert record["failure_codes"]  # what the replay met ...
    columns = episode_columns(record)
    assert columns["dyn.rejections"] == 0 and columns["dyn.next_text"] == 0  # ... is not what the model saw


@pytest.mark.extra("bfcl")
def test_a_file_without_a_log_is_replayed_unverified(imported):
    records = _records(imported / "gpt-4o-2024-08-06-FC--bfcl-base")
    assert {r["extra"]["replay"]["faithful"] for r in records.values()} == {None}
    assert all(r["success"] is not None for r in records.values())


@pytest.mark.extra("bfcl")
def test_a_pipelines_file_with_only_the_calls_gets_each_turns_closing_answer(tmp_path):
    # leaderboard submissions keep a turn's steps with calls only; an empty turn is []
    folder = tmp_path / "pipeline"
    folder.mkdir()
    step = [{"ls": '{"a": true}'}]
    tweet = [{"post_tweet": '{"content": "file1.txt, file2.txt", "tags": ["#fileshowcase"]}'}]
    lines = [
        # 29 steps with calls in all, 15 and 14 a turn: BFCL's 20-step limit holds per turn
        {"id": "multi_turn_base_11", "result": [[step] * 15, [tweet] + [step] * 13]},
        {"id": "multi_turn_base_0", "result": [[], [], [], []]},
    ]
    (folder / "BFCL_v4_multi_turn_base_result.json").write_text("".join(json.dumps(e) + "\n" for e in lines))
    result, text = invoke("import", "bfcl", folder, "--out", tmp_path / "out")
    assert result.exit_code == 0, text
    records = _records(tmp_path / "out" / "pipeline--bfcl-base")
    assert records["base_11"]["success"] is True and records["base_11"]["extra"]["imported"]["closing_steps"] == 2
    assert "force_quit" not in records["base_11"]["extra"]
    assert records["base_0"]["success"] is False and records["base_0"]["harness_error"] is None
    assert records["base_0"]["extra"]["imported"]["closing_steps"] == 4


@pytest.mark.extra("bfcl")
def test_a_v3_divergence_refuses_its_fork_points_by_name(imported, tmp_path):
    result, text = invoke(
        "fork",
        imported / "deepseek-ai_DeepSeek-V3-0324--bfcl-miss-func",
        "--model",
        "agent:reader",
        "--conditions",
        "raw",
        "--out",
        tmp_path / "f",
    )
    assert result.exit_code == 2
    assert "at or after the import's first divergence from what the model was shown" in " ".join(text.split())


@pytest.mark.parametrize(
    ("raw", "calls"),
    [
        ("ls(a=True)", [("ls", {"a": True})]),  # brackets completed
        ("```\n[cd(folder=document), ls()]\n```", [("cd", {"folder": "document"}), ("ls", {})]),  # a bare name
        ("[mv('a', destination='b')]", [("mv", {"destination": "b"})]),  # positional arguments dropped
        ("[f(n=+5)]", [("f", {"n": -5})]),  # BFCL negates any unary operation's constant
        (
            "[sum(numbers=[wc(file_name='r', mode='c')])]",
            [("sum", {"numbers": [{"wc": {"file_name": "r", "mode": "c"}}]})],
        ),
        ("[f(x=__import__('os').getcwd())]", [("f", {"x": "__import__('os').getcwd()"})]),  # kept as its text
    ],
)
def test_a_step_without_a_log_is_decoded_as_bfcls_prompting_decoder_does_without_evaluating(raw, calls):
    from envs.bfcl.decode import prompting_calls

    assert [(c.name, c.arguments) for c in prompting_calls(raw)] == calls


@pytest.mark.parametrize(
    ("raw", "ends_the_turn"),
    [
        ("I have listed the files.", True),  # text: BFCL's decoder fails, the turn ends
        ("[f(n=a - 1)]", True),  # its decoder `eval`s the arithmetic: a NameError, the turn ends
        ("[f(n=[x for x in y])]", True),  # an expression its decoder does not read
        ("[f(n={})]", True),  # its writer fails on an empty dict
        ("[f(n=1 + 2)]", False),  # computed by its decoder: not here (a harness error naming it)
        ("[f(n=g(x=1))]", False),  # a nested call it would execute: not here
    ],
)
def test_what_bfcls_decoder_fails_on_ends_the_turn_and_what_it_computes_is_refused(raw, ends_the_turn):
    from harness.imports.bfcl_format import Undecodable, _raw_calls

    if ends_the_turn:
        assert _raw_calls(raw, None) is None
    else:
        with pytest.raises(Undecodable):
            _raw_calls(raw, None)


@pytest.mark.parametrize(
    ("here", "there", "cause"),
    [
        ('{"result": 4.85340659285368}', '{"result": 4.853406592853679}', "the same number but for its last digits"),
        ('{"error": "cd: x"}', '{"current_directory": "x"}', "failed here, not when the model played"),
        ('{"result": 1}', "Error during execution: boom", "failed when the model played, not here"),
        ('{"result": 1}', '{"result": 2}', "answered with another text"),
    ],
)
def test_a_divergence_says_its_cause(here, there, cause):
    from harness.imports.play import _cause

    assert _cause(here, there).startswith(cause)


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        ("cd(**{'folder': 'document'})", {"folder": "document"}),  # BFCL's eval runs cd(folder='document')
        ("mv(source='a', **{'destination': 'b'})", {"source": "a", "destination": "b"}),
        ("cd(folder='document')", {"folder": "document"}),
    ],
)
def test_keywords_written_with_double_stars_are_the_calls_arguments(text, arguments):
    """Issue 57: `**{literal dict}` was dropped, the call recorded as cd() and scored lost."""
    from harness.imports.bfcl_format import call_of_text

    assert call_of_text(text, None).arguments == arguments


@pytest.mark.parametrize("text", ["cd(**{'folder': 'a'}, folder='b')", "cd(**{1: 'a'})"])
def test_double_star_keywords_bfcls_eval_refuses_are_never_read_as_a_call(text):
    from harness.imports.bfcl_format import Undecodable, call_of_text

    with pytest.raises(Undecodable):
        call_of_text(text, None)
