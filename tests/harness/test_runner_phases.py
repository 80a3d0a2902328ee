"""The servers' lifecycle in a run: phases on GPUs (a scripted `vllm`, tests/scripted_vllm.py,
started as vLLM would be), a resume that starts only the servers of models with episodes left,
the batch-filling concurrency, and `--max-servers 1` with the real embedded llama.cpp server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.runner import play
from harness.serving import batch
from harness.serving.llama.local import gguf_path
from harness.serving.server_proc import ManagedServer, pid_alive
from harness.spec import build_spec
from results import load, render_report

SCRIPTED_VLLM = Path(__file__).parents[1] / "scripted_vllm.py"


@pytest.fixture
def vllm_log(tmp_path, monkeypatch):
    """`vllm` is the scripted one; its log of starts and stops."""
    log = tmp_path / "vllm.jsonl"
    monkeypatch.setenv("REPAIR_HARNESS_VLLM", f"{sys.executable} {SCRIPTED_VLLM}")
    monkeypatch.setenv("SCRIPTED_VLLM_LOG", str(log))
    monkeypatch.setenv("SCRIPTED_VLLM_DELAY_S", "0.01")

    def events() -> list[dict]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    return events


def spec_of(tmp_path, models, **extra):
    values = {
        "suite": "bank-disputes",
        "models": models,
        "conditions": ["raw"],
        "tasks": 3,
        "out": str(tmp_path / "run"),
        **extra,
    }
    return build_spec(values)


def _flag(argv, name):
    return argv[argv.index(name) + 1]


def test_models_that_do_not_fit_together_play_one_phase_after_the_other(tmp_path, vllm_log):
    spec = spec_of(tmp_path, ["qwen2.5-7b", "mistral-7b-v0.3"], gpus=["3"], gpu_memory_gib=40, tool_mode="native")
    summary = play(spec, preflight=True)
    assert summary.done == 6 and summary.stopped is None
    events = vllm_log()
    assert [(e["event"], _flag(e["argv"], "--served-model-name") if "argv" in e else None) for e in events] == [
        ("start", "mistralai/Mistral-7B-Instruct-v0.3"),
        ("stop", None),
        ("start", "Qwen/Qwen2.5-7B-Instruct"),
        ("stop", None),
    ]
    assert events[1]["pid"] == events[0]["pid"] and events[1]["t"] < events[2]["t"]
    for start in (events[0], events[2]):
        assert start["cuda_visible_devices"] == "3"
        assert _flag(start["argv"], "--gpu-memory-utilization") == "0.90"
        assert _flag(start["argv"], "--tool-call-parser") in ("hermes", "mistral")
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert sorted({r["model"] for r in records}) == ["mistral-7b-v0.3", "qwen2.5-7b"] and len(records) == 6
    session = json.loads((tmp_path / "run" / "run.json").read_text())["sessions"][-1]
    for model in ("qwen2.5-7b", "mistral-7b-v0.3"):
        served = session["served"][model]
        assert served["gpus"] == ["3"] and served["gpu_memory_utilization"] == 0.9 and served["memory_gib"] > 10
        assert served["preflight"][0]["passed"] is True
        assert session["concurrency"][model]["mode"] == "adaptive"


def test_a_resume_starts_only_the_servers_of_models_with_episodes_left(tmp_path, vllm_log):
    play(spec_of(tmp_path, ["qwen2.5-7b"], gpus=["0"], gpu_memory_gib=40))
    assert [e["event"] for e in vllm_log()] == ["start", "stop"]
    summary = play(spec_of(tmp_path, ["qwen2.5-7b", "mistral-7b-v0.3"], gpus=["0"], gpu_memory_gib=40))
    assert summary.skipped == 3 and summary.done == 3
    second = vllm_log()[2:]
    assert [e["event"] for e in second] == ["start", "stop"]
    assert _flag(second[0]["argv"], "--served-model-name") == "mistralai/Mistral-7B-Instruct-v0.3"


def test_a_vllm_server_gets_as_many_episodes_as_keep_its_batch_full(tmp_path, vllm_log, monkeypatch):
    monkeypatch.setattr(batch, "POLL_S", 0.1)
    monkeypatch.setenv("SCRIPTED_VLLM_BATCH", "20")
    monkeypatch.setenv("SCRIPTED_VLLM_DELAY_S", "0.1")
    spec = spec_of(tmp_path, ["qwen2.5-7b"], tasks=40, conditions=["raw", "loc_obs"], gpus=["0"], gpu_memory_gib=80)
    play(spec)
    lane = json.loads((tmp_path / "run" / "run.json").read_text())["sessions"][-1]["concurrency"]["qwen2.5-7b"]
    assert lane["mode"] == "adaptive" and lane["start"] == batch.START and lane["bound"] == batch.BOUND
    assert lane["peak"] > batch.START  # it grew while nothing waited
    # and backed off once requests queued (then may grow again: under load it regrew to its peak)
    assert lane["backoffs"] >= 1 and lane["final"] <= lane["peak"]
    report = render_report(load([tmp_path / "run"]), fmt="json")
    assert "adaptive to the server's batch" in json.loads(report)["meta"]["concurrency"]["qwen2.5-7b"]


def test_concurrency_given_bounds_the_batch_filling(tmp_path, vllm_log, monkeypatch):
    monkeypatch.setattr(batch, "POLL_S", 0.1)
    monkeypatch.setenv("SCRIPTED_VLLM_BATCH", "64")
    spec = spec_of(tmp_path, ["qwen2.5-7b"], tasks=20, concurrency=5, gpus=["0"], gpu_memory_gib=80)
    play(spec)
    lane = json.loads((tmp_path / "run" / "run.json").read_text())["sessions"][-1]["concurrency"]["qwen2.5-7b"]
    assert lane["bound"] == 5 and lane["start"] == 5 and lane["peak"] == 5


@pytest.mark.slow
@pytest.mark.extra("local")
def test_max_servers_1_plays_local_models_one_after_another(tmp_path, monkeypatch):
    """The real embedded llama.cpp server, twice: never two alive at once, both models recorded."""
    alive_at_spawn, spans = [], []
    spawn = ManagedServer._spawn

    def spawned(self):
        alive_at_spawn.append([pid for pid, _ in spans if pid_alive(pid)])
        spawn(self)
        spans.append((self.pid, self.label))

    monkeypatch.setattr(ManagedServer, "_spawn", spawned)
    shipped = f"gguf:{gguf_path()}"
    spec = build_spec(
        {
            "suite": "bank-disputes",
            "models": ["local", shipped],
            "conditions": ["raw"],
            "tasks": 1,
            "budgets": [1],
            "decoding": {"max_tokens": 16},
            "max_servers": 1,
            "out": str(tmp_path / "run"),
        }
    )
    summary = play(spec, preflight=True)
    assert summary.done == 2 and summary.harness_errors == 0
    assert [label for _, label in spans] == ["embedded llama.cpp server", "llama.cpp server (gguf)"]
    assert alive_at_spawn == [[], []]  # the first server was gone before the second started
    assert not any(pid_alive(pid) for pid, _ in spans)
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert sorted(r["model"] for r in records) == sorted(["local", shipped])
    served = json.loads((tmp_path / "run" / "run.json").read_text())["sessions"][-1]["served"]
    assert all(served[m]["preflight"][0]["passed"] for m in ("local", shipped))
