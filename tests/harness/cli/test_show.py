"""`repair-harness show`: one episode printed readably, the opening once, a folded history, and a
folder of several players asks for the model. The episodes are scripted stories or reference
agents' runs: nothing is measured."""

import json

from tests.harness.cli.invoke import invoke


def test_show_asks_for_the_model_when_several_played(agents_run):
    result, text = invoke("show", agents_run, "--task", "bank-0000", "--condition", "allowed_json")
    assert result.exit_code == 2 and len(text.strip().splitlines()) == 1
    assert "agent:gold, agent:reader" in " ".join(text.split()) and "--model" in text
    result, text = invoke("show", agents_run, "--model", "agent:reader", "--condition", "allowed_json")
    assert result.exit_code == 0, text
    assert "model agent:reader" in text
    flat = " ".join(text.split())
    assert "narrow with --task / --condition / --model / --budget / --seed" in flat  # 2 tasks match
    result, text = invoke("show", agents_run, "--model", "agent:reader", "--seed", "7")
    assert result.exit_code == 2 and "--seed 7" in text and "recorded: 0" in text


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


def test_show_on_a_folder_of_runs_names_the_runs_inside(agents_run):
    result, text = invoke("show", agents_run.parent)
    assert result.exit_code == 2 and len(text.strip().splitlines()) == 1
    assert f"{agents_run.parent} is a folder of runs; show one of them: {agents_run}" in " ".join(text.split())
