"""protocol=veriharness through the real CLI, real HTTP and the scripted server: the artifact's 36
golden runs (9 scripted scenarios x 4 conditions, game 20261051) replayed request for request, and
the issue's command form on three paper games.

The scripted model answers by scenario (the model name S1..S8, S7b) and attempt (read from the
prompt's "- attempt: N" line). On other games the same scenario is re-written for that game's
task id and walkthrough; on 20261051 it is checked to give the golden texts exactly.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from envs import get_suite
from envs.textworld.suite import PaperTextWorld
from harness.cli import app
from tests.scripted_server import Reply, ScriptedServer

pytestmark = pytest.mark.slow

DATA = Path(__file__).parents[2] / "data" / "paper-goldens"
SCENARIOS = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S7b", "S8"]
CONDITIONS = {"RawDiag": "raw", "LocObs": "loc_obs", "SameNL": "allowed_prose", "TypedFields": "allowed_json"}
VARIANTS = {
    "raw": "generic+diagnostics",
    "loc_obs": "location-observed",
    "allowed_prose": "same-info-natural",
    "allowed_json": "typed-fields",
}
SEEDS = [20261051, 20261079, 20261100]
GOLDENS = {
    (g["scenario"], CONDITIONS[g["condition"]]): g
    for g in (json.loads(p.read_text()) for p in sorted((DATA / "runs").glob("*.json")))
}
SUITE = get_suite("paper-textworld")
assert isinstance(SUITE, PaperTextWorld)
WALK = {f"textworld-{s}": SUITE.entry(s, SUITE.options_model()).walkthrough for s in [*SEEDS, 20261052]}


def envelope(task_id: str, commands: list[str], *, artifacts: bool = True) -> str:
    data: dict = {"task_id": task_id, "answer": json.dumps({"commands": commands})}
    if artifacts:
        data["artifacts"] = ["action_plan.json"]
    return json.dumps({**data, "claims": [], "self_assessment": {}, "done": True})


def scenario_texts(scenario: str, task_id: str, walk: list[str]) -> list[str]:
    good = envelope(task_id, walk)
    first = {
        "S1": good,
        "S2": f"Sure! To finish this game I would {' and then '.join(walk)}. Let me know if you need anything else.",
        "S3": envelope(task_id, ["go wesst", *walk[1:]]),
        "S4": f"```json\n{good}\n```",
        "S5": envelope(task_id, ["look"]),
        "S6": envelope(task_id, walk + ["look"] * (5 - len(walk))),
        "S7": envelope(task_id, walk, artifacts=False),
        "S7b": envelope("textworld-task", walk),
        "S8": json.dumps({"commands": walk}),
    }[scenario]
    again = {"S5": first, "S8": first}.get(scenario, good)
    return [first, again, again, again]


def _found(pattern: str, text: str, flags: int = 0) -> str:
    m = re.search(pattern, text, flags)
    assert m is not None, (pattern, text)
    return m.group(1)


def answer(body: dict) -> Reply:
    task_id = _found(r'"task_id": "(textworld-\d+)"', body["messages"][1]["content"])
    return Reply(text=scenario_texts(body["model"], task_id, WALK[task_id])[attempt_of(body)])


def attempt_of(body: dict) -> int:
    return int(_found(r"^- attempt: (\d+)$", body["messages"][1]["content"], re.M))


def pack_of(body: dict) -> dict:
    user = body["messages"][1]["content"]
    return json.loads(user[user.index("Context pack:\n") + len("Context pack:\n") :])


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """The issue's command, as written, against the scripted server."""
    out = tmp_path_factory.mktemp("vh") / "run"
    with ScriptedServer(answer, models=SCENARIOS) as server:
        args = [
            "run",
            "--suite",
            "paper-textworld",
            "--env",
            "protocol=veriharness",
            "--env",
            f"seeds={','.join(map(str, SEEDS))}",
            "--model",
            ",".join(SCENARIOS),
            "--endpoint",
            server.url,
            "--conditions",
            "raw,loc_obs,allowed_prose,allowed_json",
            "--budget",
            "4",
            "--temperature",
            "0",
            "--max-tokens",
            "512",
            "--out",
            str(out),
            # the scenarios answer the study's requests only, and the replay compares every request
            "--no-preflight",
        ]
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    return records, server.requests


def test_the_scenarios_rewritten_for_20261051_are_the_golden_texts():
    for (scenario, _), golden in GOLDENS.items():
        assert scenario_texts(scenario, "textworld-20261051", ["go east", "take worm"]) == golden["scripted_texts"]


def test_all_36_golden_runs_replay_request_for_request(played):
    records, requests = played
    by_run: dict[tuple, list[dict]] = {}
    for body in requests:
        pack = pack_of(body)
        if pack["task_id"] == "textworld-20261051":
            condition = next(c for c, v in VARIANTS.items() if v == pack["variant"])
            by_run.setdefault((body["model"], condition), []).append(body)
    equal = 0
    for (scenario, condition), golden in GOLDENS.items():
        sent = sorted(by_run[(scenario, condition)], key=lambda b: attempt_of(b))
        assert len(sent) == len(golden["calls"]), (scenario, condition)
        for body, call in zip(sent, golden["calls"], strict=True):
            want = call["request"]
            assert set(body) == set(want), (scenario, condition, sorted(body))
            assert body["model"] == scenario
            assert {k: body[k] for k in want if k != "model"} == {k: v for k, v in want.items() if k != "model"}, (
                scenario,
                condition,
                call["attempt"],
            )
        rec = next(
            r
            for r in records
            if r["model"] == scenario and r["condition"] == condition and r["task_id"] == "tw-20261051"
        )
        assert (
            rec["success"] is golden["verdict"]["success"] and rec["model_calls"] == golden["verdict"]["num_leaf_calls"]
        )
        assert rec["extra"]["prompt_words_user"] == golden["prompt_words"]["per_call"]
        equal += 1
    assert equal == 36


def test_the_command_form_plays_every_game_with_the_scenarios_verdicts(played):
    records, requests = played
    assert len(records) == len(SEEDS) * len(SCENARIOS) * 4 and not any(r["harness_error"] for r in records)
    golden = {s: GOLDENS[(s, "raw")]["verdict"] for s in SCENARIOS}
    for r in records:
        want = golden[r["model"]]
        assert (r["success"], r["model_calls"]) == (want["success"], want["num_leaf_calls"]), (r["model"], r["task_id"])
        assert r["extra"]["protocol"] == "veriharness" and r["config"]["env_options"]["protocol"] == "veriharness"
        assert r["extra"]["request_keys"] == ["max_tokens", "messages", "model", "stream", "temperature"]
    # S4 answered one fenced envelope per episode, which failed to parse (fence stripping is off)
    fenced = [r for r in records if r["extra"]["fenced_answers"]]
    assert {r["model"] for r in fenced} == {"S4"} and all(r["extra"]["fenced"][0] for r in fenced)
    # every request: the two messages, 512 tokens, greedy, "stream": false, no top_p, no seed
    for body in requests:
        assert set(body) == {"model", "messages", "max_tokens", "temperature", "stream"}
        assert body["stream"] is False and body["temperature"] == 0 and body["max_tokens"] == 512
    # the one-command game (20261079): a retry shows its own task id and its own expected values
    retries = [
        b
        for b in requests
        if pack_of(b)["task_id"] == "textworld-20261079" and "retry_feedback" in pack_of(b)["current_state"]
    ]
    assert retries and all("Repair guidance from external gates:" in b["messages"][1]["content"] for b in retries)


def _invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, " ".join(result.output.split())


@pytest.mark.parametrize(
    "args, allowed",
    [
        (["--suite", "paper-textworld", "--env", "protocol=veriplan", "--conditions", "raw"], "'veriharness'"),
        (
            ["--suite", "bank-disputes", "--env", "protocol=veriharness", "--conditions", "raw"],
            "paper-textworld (plan | step | veriharness)",
        ),
        (
            ["--suite", "textworld", "--env", "protocol=veriharness", "--conditions", "raw,self_check"],
            "allowed: raw, loc_obs, allowed_prose, allowed_json",
        ),
    ],
)
def test_a_protocol_that_cannot_be_played_exits_2_naming_the_allowed_values(tmp_path, args, allowed):
    code, text = _invoke("run", *args, "--model", "local", "--out", str(tmp_path / "r"))
    assert code == 2 and allowed in text and "Traceback" not in text, text
    code, text = _invoke("reproduce", "paper", "--model", "local", "--protocol", "step", "--out", str(tmp_path / "p"))
    assert code == 2 and "unknown protocol 'step'" in text and "allowed: veriharness, plan" in text, text


def test_reproduce_paper_plays_veriharness_by_default_and_names_the_protocol(tmp_path):
    def both(body: dict) -> Reply:
        if "Context pack:" in body["messages"][1]["content"]:
            return answer(body)
        return Reply(text=json.dumps({"answer": {"commands": WALK["textworld-20261051"]}}))

    with ScriptedServer(both, models=["S1"]) as server:
        code, text = _invoke(
            "reproduce",
            "paper",
            "--model",
            "S1",
            "--endpoint",
            server.url,
            "--games",
            "2",
            "--out",
            str(tmp_path / "vh"),
        )
        assert code == 0, text
        assert "protocol played: veriharness" in text and "Statistics: the artifact's method" in text
        assert "full_interface" in text and "paper proxy: whitespace words of the user prompts" in text
        records = [json.loads(x) for x in (tmp_path / "vh" / "records.jsonl").read_text().splitlines()]
        assert len(records) == 8 and all(r["success"] and r["model_calls"] == 1 for r in records)
        assert all(r["extra"]["prompt_words_user"] == [546] for r in records if r["task_id"] == "tw-20261051")
        code, text = _invoke(
            "reproduce",
            "paper",
            "--model",
            "S1",
            "--endpoint",
            server.url,
            "--games",
            "1",
            "--protocol",
            "plan",
            "--out",
            str(tmp_path / "plan"),
        )
        assert code == 0 and "protocol played: plan" in text, text
