"""What a newcomer meets first: one-line errors for missing flags, --version, defaults in --help,
suite options and budgets that agree with `run`, task ids in `games show`, and `show`."""

import json

import pytest
from typer.testing import CliRunner

from envs import suite_entry
from harness.cli import app
from harness.cli.games import game_seed
from harness.spec import build_spec

runner = CliRunner()


def invoke(*args, env=None):
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", **(env or {})})
    return result, result.stdout + (result.stderr if hasattr(result, "stderr") else "")


@pytest.mark.parametrize(
    "missing, flag, allowed",
    [
        ("--conditions", "--conditions is required", "allowed_json"),
        ("--suite", "--suite is required", "bank-disputes"),
        ("--model", "--model is required", "local"),
    ],
)
def test_a_missing_flag_is_one_line_naming_what_is_allowed(tmp_path, missing, flag, allowed):
    args = {"--suite": "bank-disputes", "--conditions": "raw", "--model": "local"}
    del args[missing]
    result, text = invoke("run", *[x for kv in args.items() for x in kv], "--out", tmp_path / "r")
    assert result.exit_code == 2 and "Traceback" not in text
    assert len(text.strip().splitlines()) == 1 and flag in text and allowed in text
    assert "Field required" not in text and "{" not in text  # no pydantic dump of the flags


def test_version_and_defaults_in_help():
    result, text = invoke("--version")
    assert result.exit_code == 0 and text.startswith("repair-harness ")
    result, text = invoke("run", "--help", env={"COLUMNS": "200"})
    flat = " ".join(text.split())
    assert "[default: prompt]" in flat and "[default: runs/latest]" in flat and "[default: the suite's" in flat


def test_help_lists_every_command_with_its_whole_first_sentence():
    """At 80 columns too: the plain help wraps a command's first sentence, never cuts it to "..."."""
    result, text = invoke("--help")
    flat = " ".join(text.split())
    commands = text[text.index("Commands:") :]
    assert result.exit_code == 0 and "..." not in commands and max(len(line) for line in text.splitlines()) <= 80
    assert (
        "report Solved/N with Wilson CIs and paired contrasts; the paper's numbers beside ours where they apply."
        in flat
    )
    assert "reproduce Run a published study's grid, then report ours beside theirs." in flat


def test_run_help_shows_the_defaults_a_run_uses():
    """`run --help` reads its defaults from harness.defaults and envs.study (no pydantic); RunSpec
    and Decoding must take theirs from there too, never a literal of their own."""
    from envs import study
    from envs.contract import Decoding
    from harness import defaults
    from harness.types import RunSpec

    settings = {
        (RunSpec, "sample_seeds"): list(defaults.SAMPLE_SEEDS),
        (RunSpec, "tool_mode"): defaults.TOOL_MODE,
        (RunSpec, "text_calls"): defaults.TEXT_CALLS,
        (RunSpec, "backend"): defaults.BACKEND,
        (RunSpec, "api_key_env"): defaults.API_KEY_ENV,
        (RunSpec, "concurrency"): defaults.CONCURRENCY,
        (RunSpec, "out"): defaults.OUT,
        (Decoding, "temperature"): study.TEMPERATURE,
        (Decoding, "top_p"): study.TOP_P,
        (Decoding, "max_tokens"): study.MAX_TOKENS,
    }
    result, text = invoke("run", "--help", env={"COLUMNS": "200"})
    flat = " ".join(text.split())
    for (model, field), value in settings.items():
        assert model.model_fields[field].get_default(call_default_factory=True) == value, field
        shown = ",".join(map(str, value)) if isinstance(value, list) else value
        assert f"[default: {shown}]" in flat, field


@pytest.mark.parametrize("suite", ["tools-travel", "bank-disputes"])
def test_run_uses_the_budget_suites_shows(suite):
    spec = build_spec({"suite": suite, "models": ["local"], "conditions": ["raw"]})
    assert spec.budgets == [suite_entry(suite).budget]
    result, text = invoke("suites", suite)
    assert result.exit_code == 0 and f"budget: {suite_entry(suite).budget} model calls" in text
    assert build_spec({"suite": suite, "models": ["local"], "conditions": ["raw"], "budgets": [3]}).budgets == [3]


def test_suites_name_shows_the_options_of_its_model():
    result, text = invoke("suites", "tools-travel")
    assert result.exit_code == 0 and max(len(line) for line in text.splitlines()) <= 80
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip()}
    assert "normalizing | strict" in rows["contract"] and "normalizing" in rows["contract"].split()[2]
    assert "open | enum" in rows["schema"] and "0.0..1.0" in rows["faults"] and "0.25" in rows["faults"]
    result, text = invoke("suites", "tools-trip")
    assert result.exit_code == 2 and "tools-travel" in text


def test_listings_read_at_80_columns():
    for command in ("conditions", "suites"):
        result, text = invoke(command)
        assert result.exit_code == 0 and max(len(line) for line in text.splitlines()) <= 80
        if command == "conditions":
            # every description keeps whole words on lines of useful width (not ~12 characters)
            assert "only 'invalid, try again' (floor)" in text and "self_check_wait" in text


def test_games_show_takes_task_ids():
    assert game_seed("tw-20261051") == game_seed("20261051") == 20261051
    result, text = invoke("games", "show", "bank-0001")
    assert result.exit_code == 2 and "tw-20261051" in text


def _transcript_run(tmp_path):
    """A run directory with one episode as the runner writes it (a scripted story, not a measurement)."""
    run = tmp_path / "run"
    (run / "transcripts").mkdir(parents=True)
    opening = [{"role": "system", "content": "You open disputes."}, {"role": "user", "content": "Card 4961, twice."}]
    feedback = {"role": "user", "content": 'Your previous call failed.\n\x1b[31m{"allowed": ["fraud"]}'}
    answer = {
        "text": "",
        "tool_calls": [{"name": "open_dispute", "arguments": {"reason": "twice"}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
        "finish_reason": "tool_calls",
    }
    turns = [
        {
            "kind": "action",
            "messages": opening,
            "answer": answer,
            "outcome": {
                "code": "invalid_value",
                "location": "reason",
                "observed": "twice",
                "allowed": ["fraud"],
                "message": "not an allowed reason",
            },
        },
        {
            "kind": "action",
            "messages": [*opening, {"role": "assistant", "content": ""}, feedback],
            "answer": {**answer, "text": "[bold]done[/bold]"},
            "outcome": {"observation": "dispute opened", "done": True, "won": True},
        },
    ]
    (run / "transcripts" / "a.json").write_text(json.dumps({"key": {}, "turns": turns}))
    record = {
        "suite": "bank-disputes",
        "task_id": "bank-0000",
        "model": "local",
        "condition": "allowed_json",
        "budget": 4,
        "sample_seed": 0,
        "success": True,
        "end_reason": "won",
        "model_calls": 2,
        "final_failure": None,
        "condition_params": {"tool_mode": "prompt"},
        "transcript": "transcripts/a.json",
    }
    (run / "records.jsonl").write_text(json.dumps(record) + "\n")
    return run


def test_show_prints_one_episode_readably(tmp_path):
    run = _transcript_run(tmp_path)
    result, text = invoke("show", run, "--task", "bank-0000", "--condition", "allowed_json")
    assert result.exit_code == 0, text
    assert text.count("You open disputes.") == 1  # the opening once, not once per call
    assert "told the agent (allowed_json" in text and '{"allowed": ["fraud"]}' in text
    assert 'open_dispute({"reason": "twice"})' in text and "rejected invalid_value" in text and "accepted" in text
    assert "\x1b" not in text and "\\x1b" in text  # model-visible control characters are shown, never sent
    assert "[bold]done[/bold]" in text  # model text is never read as markup
    result, text = invoke("show", run, "--condition", "raw")
    assert result.exit_code == 2 and "allowed_json" in text and len(text.strip().splitlines()) == 1


def test_run_says_how_many_episodes_and_estimates_the_rest(tmp_path):
    from bank_script import GOLD, answer, customer_message
    from scripted_server import ScriptedServer

    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        result, text = invoke(
            "run",
            "--suite",
            "bank-disputes",
            "--model",
            "scripted-model",
            "--endpoint",
            server.url,
            "--conditions",
            "raw,allowed_json",
            "--tasks",
            "2",
            "--tool-mode",
            "native",
            "--concurrency",
            "1",
            "--out",
            tmp_path / "r",
        )
    flat = " ".join(text.split())
    assert result.exit_code == 0, text
    assert "4 episodes to play, 1 at a time" in flat and "estimate: about" in flat and "for the 1 episode left" in flat


def test_the_demo_ends_with_its_folders_and_four_commands_at_80_columns():
    from harness.cli.demo import next_steps

    specs = [
        build_spec(
            {
                "suite": suite,
                "models": ["local"],
                "conditions": ["raw", "allowed_json"],
                "tasks": 2,
                "out": f"runs/demo/{name}",
            }
        )
        for suite, name in (("bank-disputes", "bank"), ("paper-textworld", "textworld"))
    ]
    lines = next_steps(specs)
    assert max(len(line) for line in lines) <= 80
    assert any("runs/demo/bank" in line and "bank-disputes" in line for line in lines)
    assert any("runs/demo/textworld" in line and "paper-textworld" in line for line in lines)
    commands = [line.strip() for line in lines if line.strip().startswith("repair-harness ")]
    assert [c.split()[1] for c in commands] == ["report", "show", "plot", "run"] and "--tasks 10" in lines[-1]


def test_show_a_history_that_folds_feedback_into_the_opening(tmp_path):
    """The paper protocol resends the opening with the previous answer and its feedback appended."""
    run = _transcript_run(tmp_path)
    opening = [{"role": "system", "content": "Reply with JSON."}, {"role": "user", "content": "Objective: take worm."}]
    folded = [
        opening[0],
        {"role": "user", "content": "Objective: take worm.\n\nYour previous answer was:\nxyzzy\n\nBad plan."},
    ]
    bad = {"code": "unparseable_plan", "message": "not JSON"}
    turns = [
        {"kind": "action", "messages": m, "answer": {"text": "xyzzy"}, "outcome": bad}
        for m in (opening, folded, folded)
    ]
    (run / "transcripts" / "a.json").write_text(json.dumps({"key": {}, "turns": turns}))
    result, text = invoke("show", run)
    assert result.exit_code == 0, text
    assert text.count("Objective: take worm.") == 1 and text.count("Bad plan.") == 2  # told twice, shown twice
    assert text.count("call 3: the model answered") == 1
