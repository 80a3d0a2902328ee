"""`fork`: recorded failures continued under other feedback from their exact state (harness.fork).

The reader is deterministic and its first failure is the same call under every condition, so a
fork of a `none` source must end exactly as the full episode of the same condition does: same
calls after the fork point, same end, and its own calls plus the replayed ones equal the full
episode's.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from results.load import read_records
from tests.harness.cli.invoke import invoke
from tests.registries import no_plugin_left  # noqa: F401  (autouse: each test's plugins are gone after it)

CONDITIONS = "raw,allowed_json,retry+code+location+allowed@json,retry+code@prose"


def _run(out: Path, *args: str) -> None:
    result, text = invoke("run", "--suite", "bank-disputes", "--tool-mode", "prompt", "--out", out, *args)
    assert result.exit_code == 0, text


def _records(out: Path) -> dict[tuple[str, str], dict]:
    rows, _ = read_records(out)
    return {(r["task_id"], r["condition"]): r for r in rows}


@pytest.fixture(scope="module")
def reader_source(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("fork") / "src"
    _run(out, "--model", "agent:reader", "--conditions", "none", "--tasks", "12")
    return out


def test_a_fork_of_the_reader_ends_as_the_full_episode_under_each_condition(reader_source, tmp_path):
    fork, full = tmp_path / "f", tmp_path / "full"
    result, text = invoke("fork", reader_source, "--model", "agent:reader", "--conditions", CONDITIONS, "--out", fork)
    assert result.exit_code == 0, text
    _run(full, "--model", "agent:reader", "--conditions", CONDITIONS, "--tasks", "12")
    forks, fulls = _records(fork), _records(full)
    source = _records(reader_source)
    failed = {t for (t, _), r in source.items() if r["invalid_calls"]}
    assert failed and {t for t, _ in forks} == failed  # one fork point per failed episode
    for (task, condition), f in forks.items():
        whole = fulls[(task, condition)]
        assert (f["success"], f["end_reason"]) == (whole["success"], whole["end_reason"]), (task, condition)
        assert f["model_calls"] + f["prefix_calls"] == whole["model_calls"]
        signatures = [c["signature"] for c in whole["calls"][f["prefix_calls"] :]]
        assert [c["signature"] for c in f["calls"]] == signatures
        assert f["fork_of"]["model"] == "agent:reader" and f["fork_of"]["condition"] == "none"
        assert f["repaired_next"] == (f["calls"][0]["outcome"] in ("accepted", "won", "lost", "done"))
    # the conditions differ in what they let the reader repair: the fork sees it
    assert any(f["success"] for f in forks.values()) and not all(f["success"] for f in forks.values())


def test_check_reproduces_every_continuation_of_reference_agents(tmp_path):
    for agent in ("agent:reader", "agent:stubborn"):
        src = tmp_path / agent.split(":")[1]
        _run(src, "--model", agent, "--conditions", "raw,allowed_json", "--tasks", "8")
        result, text = invoke("fork", src, "--check", "--out", tmp_path / f"check-{agent[6:]}")
        assert result.exit_code == 0, text
        line = next(ln for ln in text.splitlines() if ln.startswith("fork --check:"))
        assert "(100%)" in line and " of 0 " not in line, text


def test_a_resumed_fork_plays_nothing_twice(reader_source, tmp_path):
    args = ("fork", reader_source, "--conditions", "raw", "--out", tmp_path / "f")
    assert invoke(*args)[0].exit_code == 0
    before = (tmp_path / "f" / "records.jsonl").read_text()
    result, text = invoke(*args)
    assert result.exit_code == 0 and "0 episodes played" in text, text
    assert (tmp_path / "f" / "records.jsonl").read_text() == before


def test_a_point_whose_state_differs_from_the_record_is_refused_and_never_played(reader_source, tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    for name in ("run.json", "records.jsonl"):
        (src / name).write_bytes((reader_source / name).read_bytes())
    (src / "transcripts").mkdir()
    for t in (reader_source / "transcripts").iterdir():
        (src / "transcripts" / t.name).write_bytes(t.read_bytes())
    # one recorded failure's outcome edited: the rebuilt environment will not say it again
    record = next(r for r in _records(src).values() if r["invalid_calls"])
    path = src / record["transcript"]
    data = json.loads(path.read_text())
    failed = next(t for t in data["turns"] if t.get("outcome", {}).get("code"))
    failed["outcome"]["observed"] = "not what the environment said"
    path.write_text(json.dumps(data))
    result, text = invoke("fork", src, "--conditions", "raw", "--out", tmp_path / "f")
    assert result.exit_code == 0, text
    assert "1 fork point refused: state not rebuilt: call" in " ".join(text.split()) and "observed" in text
    assert record["task_id"] not in {t for t, _ in _records(tmp_path / "f")}
    meta = json.loads((tmp_path / "f" / "run.json").read_text())
    assert sum(meta["sessions"][0]["fork_refused"].values()) == 1


def test_bad_sources_are_one_line_exit_2_and_write_nothing(tmp_path):
    gold = tmp_path / "gold"
    _run(gold, "--model", "agent:gold", "--conditions", "raw", "--tasks", "3")
    cases = [
        (("fork", gold, "--conditions", "raw"), "no fork point"),
        (("fork", tmp_path / "nowhere", "--conditions", "raw"), "not a run directory"),
        (("fork", gold, "--conditions", "nosuch"), "'nosuch'"),
        (("fork", gold, "--conditions", "raw", "--model", "nosuch-model"), "'nosuch-model'"),
        (("fork", gold), "--conditions is required"),
        (("fork", gold, "--conditions", "raw", "--at", "last"), "--at takes first, all"),
    ]
    for args, said in cases:
        out = tmp_path / "out"
        result, text = invoke(*args, "--out", out)
        assert result.exit_code == 2 and said in text and "Traceback" not in text, (args, text)
        assert not out.exists()


def test_an_older_schema_is_refused(reader_source, tmp_path):
    src = tmp_path / "old"
    src.mkdir()
    (src / "run.json").write_bytes((reader_source / "run.json").read_bytes())
    lines = [json.loads(x) for x in (reader_source / "records.jsonl").read_text().splitlines()]
    for r in lines:
        r["schema_version"] = 0
    (src / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    result, text = invoke("fork", src, "--conditions", "raw", "--out", tmp_path / "f")
    assert result.exit_code == 2 and "recorded by schema 0" in text and not (tmp_path / "f").exists()


def test_report_pairs_a_fork_by_its_fork_points(reader_source, tmp_path):
    fork = tmp_path / "f"
    assert invoke("fork", reader_source, "--conditions", "raw,allowed_json", "--out", fork)[0].exit_code == 0
    result, text = invoke("report", fork, "--contrasts", "allowed_json-raw", "--format", "json")
    assert result.exit_code == 0, text
    contrast = json.loads(result.stdout)["contrasts"][0]
    points = {r["fork"] for r in _records(fork).values()}
    assert contrast["n_pairs"] == len(points) and contrast["rate_a"] > contrast["rate_b"]


@pytest.mark.parametrize(
    "suite",
    [
        pytest.param(["--suite", "tools-bank"], id="tools-bank"),
        pytest.param(["--suite", "tools-calendar"], id="tools-calendar"),
        pytest.param(["--suite", "tools-travel", "--env", "contract=strict"], id="tools-travel"),
        pytest.param(["--suite", "bfcl-base"], id="bfcl-base", marks=pytest.mark.extra("bfcl")),
        pytest.param(["--suite", "paper-textworld"], id="paper-textworld-plan", marks=pytest.mark.slow),
        pytest.param(["--suite", "paper-textworld", "--env", "protocol=step"], id="paper-textworld-step"),
    ],
)
def test_every_forkable_suite_rebuilds_its_failures_and_reproduces_them(suite, tmp_path):
    src = tmp_path / "src"
    result, text = invoke(
        "run", *suite, "--model", "agent:reader", "--conditions", "raw,self_check", "--tasks", "4", "--out", src
    )
    assert result.exit_code == 0, text
    result, text = invoke("fork", src, "--check", "--out", tmp_path / "check")
    assert result.exit_code == 0 and "refused" not in text, text
    line = next(ln for ln in text.splitlines() if ln.startswith("fork --check:"))
    assert "(100%)" in line and " of 0 " not in line, text


def test_the_veriharness_protocol_is_refused_with_its_reason(tmp_path):
    src = tmp_path / "src"
    args = ("--suite", "paper-textworld", "--env", "protocol=veriharness", "--model", "agent:reader")
    assert invoke("run", *args, "--conditions", "raw", "--tasks", "2", "--out", src)[0].exit_code == 0
    result, text = invoke("fork", src, "--conditions", "loc_obs", "--out", tmp_path / "f")
    flat = " ".join(text.split())
    assert result.exit_code == 2 and "every fork point was refused" in flat and "veriharness protocol" in flat
    assert not (tmp_path / "f").exists()


def test_the_reader_repairs_another_players_failure_from_the_feedback_alone(tmp_path):
    src, fork = tmp_path / "src", tmp_path / "f"
    _run(src, "--model", "agent:random", "--conditions", "none", "--tasks", "10")
    result, text = invoke("fork", src, "--model", "agent:reader", "--conditions", "none,allowed_json", "--out", fork)
    assert result.exit_code == 0, text
    source = {r["task_id"]: r for r in read_records(src)[0]}
    changed = {"none": 0, "allowed_json": 0}
    for r in read_records(fork)[0]:
        assert (r["model"], r["fork_of"]["model"]) == ("agent:reader", "agent:random")
        failed = source[r["task_id"]]["calls"][r["fork_of"]["call"]]
        changed[r["condition"]] += r["calls"][0]["signature"] != failed["signature"]
    # without feedback it believes what was sent and sends it again; with the allowed values it
    # replaces the located value
    assert changed["none"] == 0 and changed["allowed_json"] > 0


def test_a_sharded_fork_plays_each_episode_once_across_its_parts(reader_source, tmp_path):
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    args = ("fork", reader_source, "--conditions", "raw,allowed_json")
    assert invoke(*args, "--out", whole)[0].exit_code == 0
    result, text = invoke(*args, "--shard", "0/2,1/2", "--out", parts)
    assert result.exit_code == 0, text
    sharded = [r for d in sorted(parts.glob("shard-*")) for r in read_records(d)[0]]
    assert sorted((r["fork"], r["condition"], r["success"]) for r in sharded) == sorted(
        (r["fork"], r["condition"], r["success"]) for r in read_records(whole)[0]
    )


def test_a_plugin_suite_forks_with_its_plugin_and_a_changed_plugin_is_refused(tmp_path):
    plugin = tmp_path / "shop.py"
    plugin.write_bytes((Path(__file__).parents[2] / "examples" / "plugins" / "shop_refunds.py").read_bytes())
    src = tmp_path / "src"
    run = ("run", "--suite", "shop-refunds", "--plugin", plugin, "--model", "agent:reader", "--tasks", "6")
    assert invoke(*run, "--conditions", "none", "--out", src)[0].exit_code == 0
    result, text = invoke("fork", src, "--conditions", "raw", "--out", tmp_path / "nope")
    assert result.exit_code == 2 and "give it with --plugin" in text
    result, text = invoke("fork", src, "--plugin", plugin, "--check", "--out", tmp_path / "check")
    assert result.exit_code == 0 and "(100%)" in text, text
    plugin.write_text(plugin.read_text() + "\n# edited\n")
    # a fresh process: this one holds the plugin as it was loaded
    cmd = [sys.executable, "-m", "harness.cli", "fork", str(src), "--plugin", str(plugin), "--conditions", "raw"]
    done = subprocess.run([*cmd, "--out", str(tmp_path / "f")], capture_output=True, text=True)
    flat = " ".join(done.stderr.split())
    assert done.returncode == 2 and "is not the one the source ran" in flat and not (tmp_path / "f").exists()


def test_a_killed_fork_resumes_with_nothing_lost_or_doubled(tmp_path):
    """A served model repairs the reader's failures; the fork is SIGKILLed three times mid-run."""
    import os
    import signal
    import time

    from tests.harness.bank_script import GOLD, answer, customer_message
    from tests.scripted_server import ScriptedServer

    root = Path(__file__).parents[2]
    src, out = tmp_path / "src", tmp_path / "f"
    _run(src, "--model", "agent:reader", "--conditions", "none", "--tasks", "20")

    def slow(body):  # 0.3 s an answer: the kills land mid-run
        reply = answer(GOLD[customer_message(body)], "prompt")
        reply.delay_s = 0.3
        return reply

    with ScriptedServer(slow) as server:
        cmd = [sys.executable, "-m", "harness.cli", "fork", str(src), "--model", "scripted-model"]
        cmd += ["--endpoint", server.url, "--conditions", "raw,allowed_json", "--no-preflight"]
        cmd += ["--concurrency", "2", "--out", str(out)]
        env = {**os.environ, "PYTHONPATH": str(root)}
        kills = 0
        for wait in (1.5, 1.0, 1.2):
            proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(wait)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait()
        final = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    assert final.returncode == 0, final.stderr[-2000:]
    assert kills == 3
    rows = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines() if x.strip()]
    keys = [(r["fork"], r["condition"]) for r in rows]
    assert len(keys) == len(set(keys)) == 40  # 20 failures x 2 conditions, each once
    assert all(r["success"] and r["fork_of"]["model"] == "agent:reader" for r in rows)


@pytest.mark.parametrize(
    "args",
    [
        ["--model", "agent:reader,agent:reader"],
        ["--model", "agent:reader", "--seeds", "0,0"],
        ["--model", "agent:reader", "--seeds", "0..1,1"],
        ["--model", "agent:reader", "SOURCE/."],  # the source named twice
        ["--model", "agent:reader", "PARENT"],  # and again as the folder that holds it
    ],
)
def test_a_value_or_source_named_twice_forks_each_point_once(reader_source, tmp_path, args):
    """Issue 57: `fork` dedups its grid and its sources as `run` does (before: every point played
    twice, exit 0, and the directory refused afterwards)."""
    args = [a.replace("SOURCE", str(reader_source)).replace("PARENT", str(reader_source.parent)) for a in args]
    fork = tmp_path / "f"
    result, text = invoke("fork", reader_source, *args, "--conditions", "raw", "--out", fork)
    assert result.exit_code == 0, text
    rows, _ = read_records(fork)
    keys = [(r["task_id"], r["model"], r["sample_seed"], r["fork_of"]["call"]) for r in rows]
    assert rows and len(keys) == len(set(keys)), keys
    seeds = {r["sample_seed"] for r in rows}
    assert seeds == ({0, 1} if "0..1,1" in args else {0})
    again, text = invoke("report", fork)
    assert again.exit_code == 0, text


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--at", "²"], "--at takes first, all or a call number N >= 1, got '²'"),  # was a ValueError traceback
        (["--budget", "0"], "--budget takes the repair calls after the failure, N >= 1, got 0"),  # was a pydantic dump
        (["--budget", "-1"], "got -1"),
        (
            ["--dry-run", "--seeds", "0..2000000"],
            "the grid has 2,000,001 episodes or more (0..2000000)",
        ),  # ran out of memory
        (["--dry-run", "--seeds", "0..300000"], "the grid has 1,200,004 episodes"),  # 4 points x 300,001 seeds
        (["--seeds", "0..1000000000000"], "more than one run plays"),
    ],
)
def test_a_bad_fork_option_is_one_line_exit_2(tmp_path, args, said):
    """Issue 57's fork tracebacks and hangs: each a line naming the value, nothing written."""
    src = tmp_path / "src"
    _run(src, "--model", "agent:reader", "--conditions", "none", "--tasks", "4")
    out = tmp_path / "out"
    result, text = invoke("fork", src, "--model", "agent:reader", "--conditions", "raw", *args, "--out", out)
    assert result.exit_code == 2 and said in " ".join(text.split()) and "Traceback" not in text, text
    assert not out.exists()
