"""The whole pipeline against a scripted OpenAI-compatible server over real HTTP."""

import asyncio
import json
from pathlib import Path

import pytest

from conditions import CONDITIONS
from conditions.compose import Composition
from harness.runner import run
from harness.spec import build_spec
from tests.harness.bank_script import GOLD, answer, customer_message, repairing
from tests.scripted_server import Reply, ScriptedServer, last_message


def spec_for(server, tmp_path, **kw):
    values = {
        "suite": "bank-disputes",
        "models": ["scripted-model"],
        "endpoints": [server.url],
        "conditions": ["allowed_json"],
        "tasks": 3,
        "out": str(tmp_path / "run"),
        "concurrency": 2,
        "tool_mode": "native",
        "max_retries": 2,
    }
    values.update(kw)
    return build_spec(values)


def records(spec):
    return [json.loads(line) for line in Path(spec.out, "records.jsonl").read_text().splitlines()]


def play(spec, **kw):
    return asyncio.run(run(spec, **kw))


@pytest.mark.parametrize("mode", ["native", "prompt"])
def test_success_on_the_first_call(tmp_path, mode):
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], mode)) as server:
        spec = spec_for(server, tmp_path, tool_mode=mode)
        summary = play(spec)
    rows = records(spec)
    assert summary.done == 3 and len(rows) == 3
    for r in rows:
        assert r["success"] is True and r["model_calls"] == 1 and r["first_call_valid"] is True and not r["repaired"]
        assert r["end_reason"] == "won" and r["prompt_tokens"] == 11 and r["completion_tokens"] == 7
        assert r["calls"][0]["parse_modes"] == (["native"] if mode == "native" else ["tag"])
    if mode == "native":
        assert (
            server.requests[0]["tool_choice"] == "auto"
            and server.requests[0]["tools"][0]["function"]["name"] == "open_dispute"
        )
    else:
        assert "tools" not in server.requests[0] and "<tool_call>" in server.requests[0]["messages"][0]["content"]


# every condition spelled as a composition (a renderer's text is its own: bfcl-native, tests/conditions)
@pytest.mark.parametrize(
    "condition", sorted(n for n, c in CONDITIONS.items() if not c.env and isinstance(c.shows, Composition))
)
def test_repair_after_each_condition(tmp_path, condition):
    with ScriptedServer(repairing("native", {"reason": "chargeback"})) as server:
        spec = spec_for(server, tmp_path, conditions=[condition], tasks=2)
        play(spec)
    rows = records(spec)
    assert all(r["success"] and r["repaired"] and r["first_call_valid"] is False for r in rows)
    assert all(r["failure_codes"] == ["literal_error"] for r in rows)
    self_check = CONDITIONS.get(condition).arbiter != "validator"
    # self-check arms pay a review call per attempt: 2 attempts = 4 calls, 2 of them reviews
    assert all(r["model_calls"] == (4 if self_check else 2) for r in rows)
    assert all(r["review_calls"] == (2 if self_check else 0) for r in rows)
    feedback = [last_message(b) for b in server.requests if b["messages"][-1]["role"] == "tool"]
    assert feedback, "the feedback reached the model as the tool's answer"
    # the traceback leaks pydantic's own message, which lists the literal's members
    shows = CONDITIONS.get(condition).shows
    shows_allowed = shows.has("allowed") or shows.has("traceback")
    assert all(("wrong_amount" in f) == shows_allowed for f in feedback)
    assert all(r["condition"] == condition and r["condition_params"]["composition"] == shows.spelled() for r in rows)
    # the run's settings are recorded once, in config; condition_params holds only the condition's own
    assert all(set(r["condition_params"]) == {"composition", "arbiter", "paper_name", "env"} for r in rows)
    assert all(r["config"]["tool_mode"] == "native" and "feedback_cut" in r["config"] for r in rows)
    if self_check:
        assert any(b["messages"][-1]["content"] == CONDITIONS.get(condition).review_prompt() for b in server.requests)


def test_budget_exhaustion_records_the_limit(tmp_path):
    with ScriptedServer(repairing("native", {"card_last4": "0000"}, fail_times=99)) as server:
        spec = spec_for(server, tmp_path, budgets=[3], tasks=1)
        play(spec)
    (r,) = records(spec)
    assert r["success"] is False and r["limit_hit"] and r["end_reason"] == "budget"
    assert r["model_calls"] == 3 == len(server.requests) and r["invalid_calls"] == 3
    assert r["failure_codes"] == ["unknown_card"] * 3 and r["final_failure"] == "unknown_card"


def test_unparseable_and_missing_calls_meet_the_feedback_condition(tmp_path):
    answers = iter(
        [
            '<tool_call>{"name": "open_dispute", "arguments": {"card_last4": </tool_call>',
            "I have opened the dispute for you.",
        ]
    )

    def responder(body):
        nxt = next(answers, None)
        return Reply(text=nxt) if nxt else answer(GOLD[customer_message(body)], "prompt")

    with ScriptedServer(responder) as server:
        spec = spec_for(server, tmp_path, tool_mode="prompt", tasks=1, concurrency=1)
        play(spec)
    (r,) = records(spec)
    assert r["failure_codes"] == ["unparseable_call", "no_action"] and r["success"] and r["model_calls"] == 3
    assert "Validator" not in last_message(server.requests[1])  # allowed_json renders a keyed object
    assert json.loads(last_message(server.requests[1]).splitlines()[-1])["error"] == "unparseable_call"


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_are_retried(tmp_path, status):
    seen = {"n": 0}

    def responder(body):
        seen["n"] += 1
        if seen["n"] <= 2:
            return Reply(status=status, headers={"retry-after": "0"})
        return answer(GOLD[customer_message(body)], "native")

    with ScriptedServer(responder) as server:
        spec = spec_for(server, tmp_path, tasks=1, concurrency=1)
        play(spec)
    (r,) = records(spec)
    assert r["success"] is True and r["harness_error"] is None and len(server.requests) == 3


@pytest.mark.parametrize("failure", ["500", "timeout"])
def test_persistent_failures_become_harness_errors_not_agent_failures(tmp_path, failure):
    reply = Reply(status=500) if failure == "500" else Reply(text="late", delay_s=1.5)
    with ScriptedServer(lambda body: reply) as server:
        spec = spec_for(server, tmp_path, tasks=2, max_retries=1, request_timeout_s=0.5)
        summary = play(spec)
    rows = records(spec)
    assert len(rows) == 2 and summary.harness_errors == 2
    assert all(r["success"] is None and r["end_reason"] == "harness_error" and r["harness_error"] for r in rows)
    assert len(server.requests) == 4  # 2 episodes x (1 try + 1 retry)


def test_api_key_from_the_environment_never_reaches_records(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SECRET_KEY", "sk-test-0123456789abcdef")
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        spec = spec_for(server, tmp_path, tasks=1, api_key_env="MY_SECRET_KEY")
        play(spec)
    headers = {k.lower(): v for k, v in server.headers_seen[0].items()}
    assert headers["authorization"] == "Bearer sk-test-0123456789abcdef"
    for path in Path(spec.out).rglob("*"):
        if path.is_file():
            assert "sk-test-0123456789abcdef" not in path.read_text(), path


def test_same_spec_same_server_same_records(tmp_path):
    responder = repairing("native", {"amount": "1.00"})
    outs = []
    for i in range(2):
        with ScriptedServer(responder) as server:
            spec = spec_for(
                server, tmp_path, out=str(tmp_path / f"run{i}"), conditions=["raw", "allowed_prose"], tasks=4
            )
            play(spec)
        outs.append(sorted(records(spec), key=lambda r: (r["task_id"], r["condition"])))

    def strip(r):
        r = {k: v for k, v in r.items() if k not in {"run_id", "latency_s"}}
        r["calls"] = [{k: v for k, v in c.items() if k != "latency_s"} for c in r["calls"]]
        return r

    assert [strip(r) for r in outs[0]] == [strip(r) for r in outs[1]]
    assert len(outs[0]) == 8


def test_run_json_holds_spec_versions_commit_and_model_ids(tmp_path):
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        spec = spec_for(server, tmp_path, tasks=1)
        play(spec)
    meta = json.loads(Path(spec.out, "run.json").read_text())
    assert meta["spec"]["suite"] == "bank-disputes" and meta["identity_hash"] == spec.identity_hash()
    session = meta["sessions"][-1]
    assert session["versions"]["pydantic"] and "commit" in session["git"]
    assert session["served"]["scripted-model"]["model_ids"][server.url] == ["scripted-model"]
    transcript = json.loads(Path(spec.out, records(spec)[0]["transcript"]).read_text())
    assert transcript["turns"][0]["answer"]["tool_calls"][0]["name"] == "open_dispute"


def test_self_check_records_each_call_with_its_own_usage(tmp_path):
    from tests.harness.bank_script import REVIEWS

    inner = repairing("native", {"reason": "chargeback"})

    def responder(body):
        reply = inner(body)
        reply.completion_tokens = 100 if body["messages"][-1].get("content") in REVIEWS else 7
        return reply

    with ScriptedServer(responder) as server:
        spec = spec_for(server, tmp_path, conditions=["self_check"], tasks=1)
        play(spec)
    (r,) = records(spec)
    assert [(c["kind"], c["completion_tokens"]) for c in r["calls"]] == [("action", 7), ("review", 100)] * 2
    assert r["completion_tokens"] == 214 and r["action_calls"] == 2 and r["review_calls"] == 2


@pytest.mark.parametrize("text_calls", ["parse", "violation"])
def test_native_call_returned_as_text_follows_the_switch(tmp_path, text_calls):
    """vLLM's hermes parser hands Qwen2.5-Coder's fenced JSON back as plain text (vLLM #32926)."""

    def responder(body):
        gold = GOLD[customer_message(body)]
        return Reply(text="```json\n" + json.dumps({"name": "open_dispute", "arguments": gold}) + "\n```")

    with ScriptedServer(responder) as server:
        spec = spec_for(server, tmp_path, tasks=1, text_calls=text_calls, budgets=[2])
        play(spec)
    (r,) = records(spec)
    if text_calls == "parse":
        assert r["success"] and r["calls"][0]["parse_modes"] == ["text_fenced"] and r["fenced_answers"] == 1
    else:
        assert not r["success"] and r["failure_codes"] == ["unparseable_call", "unparseable_call"]


def test_episodes_are_spread_over_several_endpoints(tmp_path):
    def respond(body):
        return answer(GOLD[customer_message(body)], "native")

    with ScriptedServer(respond) as a, ScriptedServer(respond) as b:
        spec = spec_for(a, tmp_path, endpoints=[a.url, b.url], tasks=6, concurrency=1)
        play(spec)
    assert len(records(spec)) == 6 and a.requests and b.requests
    assert len(a.requests) + len(b.requests) == 6


def test_messages_to_the_customer_are_not_tool_calls(tmp_path):
    with ScriptedServer(lambda body: Reply(text="Could you tell me which card it was?")) as server:
        spec = spec_for(server, tmp_path, suite="tools-bank", tasks=1, budgets=[2], tool_mode="prompt")
        play(spec)
    (r,) = records(spec)
    assert r["tool_calls"] == 0 and r["first_call_valid"] is None and r["extra"]["messages_to_user"] == 2
    assert r["model_calls"] == 2 and r["end_reason"] == "budget"


def test_a_transcript_that_cannot_be_written_is_the_episodes_harness_error_and_the_run_goes_on(tmp_path, monkeypatch):
    import harness.rundir.store as store_module

    replace = store_module.replace_file

    def no_transcripts(path, data, **kw):
        if path.parent.name == "transcripts":
            raise OSError(28, "No space left on device")
        replace(path, data, **kw)

    monkeypatch.setattr(store_module, "replace_file", no_transcripts)
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        spec = spec_for(server, tmp_path)
        summary = play(spec)
    rows = records(spec)
    assert summary.done == 3 and summary.harness_errors == 3 and summary.solved == 0 and len(rows) == 3
    assert all(r["harness_error"] == "recording failed: OSError: [Errno 28] No space left on device" for r in rows)
    assert all(r["transcript"] == "" and r["model_calls"] == 1 for r in rows)


def test_the_progress_bar_redraws_on_a_terminal_only_and_is_drawn_once_elsewhere():
    import io

    from rich.console import Console

    from harness.runner import _progress

    assert _progress(Console(file=io.StringIO(), force_terminal=True)).live.auto_refresh is True
    log = io.StringIO()
    with _progress(Console(file=log, width=120)) as progress:
        assert progress.live.auto_refresh is False  # no refresh thread taking the GIL from the loop
        bar = progress.add_task("episodes", total=2, solved="0", tokens="0", eta="")
        progress.update(bar, advance=2, solved="1", tokens="12")
    assert log.getvalue().count("episodes") == 1 and "2/2 solved 1 tokens 12" in log.getvalue()
