"""A run and a report never disagree about which records a run directory holds: an episode
recorded twice is refused by both, naming both lines, with nothing changed; a harness error
followed by that episode's result is read alike by both. And a --tasks beyond the suite says how
many tasks play."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from harness.cli import app

GOLD = ["--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw"]


def cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


def played(tmp_path: Path, tasks: int = 3) -> Path:
    out = tmp_path / "run"
    code, output = cli("run", *GOLD, "--tasks", str(tasks), "--out", str(out))
    assert code == 0, output
    return out


def test_a_duplicated_line_is_refused_by_run_and_report_alike_naming_both_lines(tmp_path):
    out = played(tmp_path)
    records = out / "records.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    damaged = "".join([*lines, lines[1], '{"cut": '])  # line 2 again as line 4, then a cut last line
    records.write_text(damaged)
    meta = (out / "run.json").read_bytes()
    key = "bank-disputes|bank-0001|agent:gold|raw|4|0|none"
    said = f"{records}: episode {key} recorded twice (lines 2 and 4); nothing was changed"
    code, output = cli("run", *GOLD, "--tasks", "3", "--out", str(out))
    assert code == 2 and said in output and "Traceback" not in output, output
    assert records.read_text() == damaged and (out / "run.json").read_bytes() == meta  # not even the cut line
    for command in (["report", str(out)], ["run", *GOLD, "--tasks", "4", "--out", str(out)]):
        code, output = cli(*command)
        assert code == 2 and said in output, output
    assert records.read_text() == damaged


def test_an_error_then_the_episodes_result_is_one_episode_for_run_and_report(tmp_path):
    out = played(tmp_path)
    records = out / "records.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    error = {**json.loads(lines[0]), "success": None, "harness_error": "an older harness's error"}
    records.write_text("".join([json.dumps(error) + "\n", *lines]))
    # both see the error's record beside the result
    code, output = cli("report", str(out))
    assert code == 0 and "episodes: 4, harness errors: 1" in output and "3/3" in output, output
    code, output = cli("run", *GOLD, "--tasks", "3", "--out", str(out))
    assert code == 4 and "0 episodes played, 3 already recorded" in output, output
    assert "1 earlier harness-error records kept" in output
    # the result stands: --retry-errors replays nothing (no second result), and moves the error aside
    code, output = cli("run", *GOLD, "--tasks", "3", "--out", str(out), "--retry-errors")
    assert code == 0 and "0 episodes played, 3 already recorded" in output, output
    assert [json.loads(line) for line in records.read_text().splitlines()] == [json.loads(line) for line in lines]
    assert len((out / "harness_errors.jsonl").read_text().splitlines()) == 1
    code, output = cli("report", str(out))
    assert code == 0 and "episodes: 3, harness errors: 0" in output and "3/3" in output, output


def test_tasks_beyond_the_suite_say_how_many_play(tmp_path):
    code, output = cli("run", *GOLD, "--tasks", str(10**12), "--out", str(tmp_path / "all"))
    assert code == 0 and "1,000,000,000,000 tasks asked for; bank-disputes has 200: all 200 play" in output, output
    ids = ["--task-ids", "bank-0003,bank-0007"]
    code, output = cli("run", *GOLD, *ids, "--tasks", "5", "--out", str(tmp_path / "two"))
    assert code == 0 and "5 tasks asked for; bank-disputes has 2 among the --task-ids given: all 2 play" in output
    code, output = cli("run", *GOLD, "--tasks", "200", "--out", str(tmp_path / "exact"))
    assert code == 0 and "asked for" not in output
