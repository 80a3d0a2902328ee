"""Placement: phases of servers on GPUs, `--max-servers`, and `run --dry-run` (text and JSON).

No GPU here: inventories are declared (`--gpus ... --gpu-memory-gib ...`) or a fake NVML."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.serving.gpus import inventory
from harness.serving.llama.local import gguf_path
from harness.serving.placement import MAX_UTILIZATION, SOLO_UTILIZATION, PlacementError, plan
from harness.spec import build_spec
from tests.fake_nvml import install, uninstall

FOUR = ["qwen2.5-7b", "llama-3.1-8b-awq", "qwen2.5-coder-14b-awq", "mistral-7b-v0.3"]


def spec_of(models, **extra):
    return build_spec({"suite": "bank-disputes", "models": models, "conditions": ["raw"], **extra})


def check_invariants(placed, models):
    """Each model served once; per phase, no GPU over MAX_UTILIZATION; each server at least its need."""
    served = [s.model for p in placed.phases for s in p.servers]
    assert sorted(served) == sorted(models)
    for phase in placed.phases:
        on = defaultdict(float)
        for s in phase.servers:
            assert len(set(s.gpus)) == len(s.gpus) == s.tp
            assert s.utilization >= s.need
            for g in s.gpus:
                on[g] += s.utilization
        assert all(total <= MAX_UTILIZATION + 1e-9 for total in on.values()), dict(on)


def test_four_presets_on_two_80_gib_gpus_by_default_take_a_gpu_each_in_two_phases():
    placed = plan(spec_of(FOUR), FOUR, inventory(["0", "1"], 80))
    check_invariants(placed, FOUR)
    assert [len(p.servers) for p in placed.phases] == [2, 2]
    for phase in placed.phases:
        assert sorted(s.gpus for s in phase.servers) == [("0",), ("1",)]  # disjoint
        assert {s.utilization for s in phase.servers} == {SOLO_UTILIZATION}


def test_four_presets_on_two_80_gib_gpus_sharing_run_at_once_two_to_a_gpu():
    placed = plan(spec_of(FOUR, share_gpus=True), FOUR, inventory(["0", "1"], 80))
    check_invariants(placed, FOUR)
    assert len(placed.phases) == 1
    per_gpu = defaultdict(list)
    for s in placed.phases[0].servers:
        per_gpu[s.gpus].append(s.model)
    assert sorted(map(len, per_gpu.values())) == [2, 2]
    # the spare room of a shared GPU is split in proportion to need, up to vLLM's own 0.90
    for models in per_gpu.values():
        total = sum(placed.server(m).utilization for m in models)
        assert SOLO_UTILIZATION - 0.02 <= total <= SOLO_UTILIZATION


def test_two_models_on_two_gpus_get_one_each_at_vllms_default():
    models = FOUR[:2]
    placed = plan(spec_of(models), models, inventory(["0", "1"], 80))
    check_invariants(placed, models)
    assert {s.gpus for s in placed.phases[0].servers} == {("0",), ("1",)}
    assert {s.utilization for s in placed.phases[0].servers} == {SOLO_UTILIZATION}


def test_models_that_do_not_fit_together_wait_for_a_later_phase():
    placed = plan(spec_of(FOUR, share_gpus=True), FOUR, inventory(["0"], 40))
    check_invariants(placed, FOUR)
    # the largest first, each phase taking what still fits beside it
    assert [[s.model for s in p.servers] for p in placed.phases] == [
        ["mistral-7b-v0.3"],
        ["qwen2.5-coder-14b-awq"],
        ["qwen2.5-7b", "llama-3.1-8b-awq"],
    ]
    for phase in placed.phases:
        assert sum(s.estimate.per_gpu_gib for s in phase.servers) <= 40 * MAX_UTILIZATION


def test_max_servers_caps_each_phase():
    placed = plan(spec_of(FOUR, max_servers=1), FOUR, inventory(["0", "1"], 80))
    check_invariants(placed, FOUR)
    assert [len(p.servers) for p in placed.phases] == [1, 1, 1, 1]
    assert all(s.utilization == SOLO_UTILIZATION for p in placed.phases for s in p.servers)


def test_a_model_too_large_for_one_gpu_gets_tensor_parallel_and_whole_gpus():
    models = ["qwen2.5-coder-14b-awq", "qwen2.5-7b"]
    placed = plan(spec_of(models, share_gpus=True), models, inventory(["0", "1", "2"], 16))
    check_invariants(placed, models)
    coder = placed.server("qwen2.5-coder-14b-awq")
    assert coder.tp == 2 and coder.estimate.per_gpu_gib <= 16 * MAX_UTILIZATION
    assert "tp 2" in coder.estimate.describe()
    # no other server shares a GPU of a tensor-parallel one
    phase = next(p for p in placed.phases if coder in p.servers)
    assert not set(coder.gpus) & {g for s in phase.servers if s is not coder for g in s.gpus}


def test_a_model_that_fits_nowhere_is_one_clear_error():
    with pytest.raises(PlacementError, match=r"qwen2\.5-7b needs .* GiB per GPU at tensor parallel 1.*8.*GiB"):
        plan(spec_of(["qwen2.5-7b"]), ["qwen2.5-7b"], inventory(["0"], 8))


def test_memory_in_use_by_others_is_left_to_them(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    install(monkeypatch, [("GPU-a", 80.0, 60.0, "busy"), ("GPU-b", 80.0, 0.0, "free")])
    models = FOUR[:2]
    placed = plan(spec_of(models, share_gpus=True), models)
    check_invariants(placed, models)
    busy = [s for s in placed.phases[0].servers if s.gpus == ("0",)]
    assert all(s.utilization <= MAX_UTILIZATION - 60 / 80 for s in busy)


@pytest.mark.extra("local")
def test_llama_cpp_servers_count_toward_max_servers_and_unserved_models_play_first():
    shipped = f"gguf:{gguf_path()}"
    models = ["local", shipped, "agent:gold"]
    placed = plan(spec_of(models, max_servers=1), models)
    assert [[s.model for s in p.servers] for p in placed.phases] == [["local"], [shipped]]
    assert [p.others for p in placed.phases] == [["agent:gold"], []]
    assert all(s.kind == "llama.cpp" and s.gpus == () for p in placed.phases for s in p.servers)
    unbounded = plan(spec_of(models), models)
    assert len(unbounded.phases) == 1 and len(unbounded.phases[0].servers) == 2


def test_models_behind_an_endpoint_start_no_server():
    spec = spec_of(FOUR, endpoints=["http://127.0.0.1:9/v1"])
    placed = plan(spec, FOUR)
    assert len(placed.phases) == 1 and placed.phases[0].servers == [] and placed.phases[0].others == FOUR


def test_no_inventory_plans_the_servers_without_gpus_and_says_why(monkeypatch):
    uninstall(monkeypatch)
    placed = plan(spec_of(FOUR[:2], max_servers=1), FOUR[:2])
    assert [len(p.servers) for p in placed.phases] == [1, 1]
    assert all(s.gpus == () and s.utilization is None for p in placed.phases for s in p.servers)
    assert "nvidia-ml-py is not installed" in placed.notes[0]


def dry_run(tmp_path: Path, *args: str):
    out = tmp_path / "never"
    result = CliRunner().invoke(
        app,
        ["run", "--suite", "bank-disputes", "--conditions", "raw", "--dry-run", "--out", str(out), *args],
    )
    assert result.exit_code == 0, result.output
    assert not out.exists() and list(tmp_path.iterdir()) == []  # nothing written
    return result.output


@pytest.mark.parametrize("sharing", [[], ["--share-gpus"]])
def test_dry_run_json_of_four_presets_on_two_gpus(tmp_path, sharing):
    text = dry_run(
        tmp_path, "--model", ",".join(FOUR), "--format", "json", "--gpus", "0,1", "--gpu-memory-gib", "80", *sharing
    )
    data = json.loads(text)
    assert len(data["phases"]) == (1 if sharing else 2)
    if not sharing:  # a GPU each
        assert all(len({g for s in p["servers"] for g in s["gpus"]}) == len(p["servers"]) for p in data["phases"])
    servers = [s for phase in data["phases"] for s in phase["servers"]]
    assert sorted(s["model"] for s in servers) == sorted(FOUR)
    for phase in data["phases"]:
        on = defaultdict(float)
        for s in phase["servers"]:
            assert set(s) >= {"model", "gpus", "memory_gib", "command", "env"}
            assert s["env"]["CUDA_VISIBLE_DEVICES"] == ",".join(s["gpus"])
            flag = s["command"].index("--gpu-memory-utilization")
            assert float(s["command"][flag + 1]) == s["gpu_memory_utilization"]
            assert s["command"][s["command"].index("--tensor-parallel-size") + 1] == str(len(s["gpus"]))
            assert s["memory_gib"] == pytest.approx(
                s["estimate"]["weights_gib"] + s["estimate"]["kv_gib"] + s["estimate"]["runtime_gib"], abs=0.02
            )
            for g in s["gpus"]:
                on[g] += s["gpu_memory_utilization"]
        assert max(on.values()) <= MAX_UTILIZATION


def test_dry_run_text_prints_the_estimate_its_inputs_and_the_exact_command(tmp_path):
    text = dry_run(
        tmp_path, "--model", "qwen2.5-7b,local", "--gpus", "0", "--gpu-memory-gib", "24", "--tool-mode", "native"
    )
    flat = " ".join(text.split())
    assert "GPUs: 0 (24.0 GiB, 0.0 in use) [declared: --gpus 0 --gpu-memory-gib 24]" in flat
    assert "7.62B params x 2 B (bfloat16)" in flat and "8192 tokens x 8 sequences" in flat
    assert "$ CUDA_VISIBLE_DEVICES=0 " in flat and "serve Qwen/Qwen2.5-7B-Instruct --enable-auto-tool-choice" in flat
    assert "--tool-call-parser hermes" in flat and "--gpu-memory-utilization 0.90" in flat
    assert "local (llama.cpp, CPU)" in flat and "nothing was written" in flat


def test_dry_run_of_a_model_that_fits_nowhere_is_exit_2(tmp_path):
    result = CliRunner().invoke(
        app,
        ["run", "--suite", "bank-disputes", "--conditions", "raw", "--model", "qwen2.5-7b", "--dry-run"]
        + ["--gpus", "0", "--gpu-memory-gib", "8", "--out", str(tmp_path / "r")],
    )
    assert result.exit_code == 2 and "needs" in result.output and "Traceback" not in result.output
