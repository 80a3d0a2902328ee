"""The GPU inventory (NVML, CUDA_VISIBLE_DEVICES, declared) and the memory estimate of a preset.

NVML is a fake (tests/fake_nvml.py): this machine has no GPU. The estimate's figures are
recomputed here from the preset's inputs, so a change of formula or of a preset's size shows."""

from __future__ import annotations

import pytest

from envs.errors import UserError
from harness.serving.gpus import GIB, KV_SEQUENCES, RUNTIME_GIB, estimate, fraction_up, inventory
from harness.serving.vllm.rows import PRESETS
from tests.fake_nvml import install, uninstall

FOUR = [
    ("GPU-aaaa", 80.0, 0.5, "NVIDIA H100 80GB HBM3"),
    ("GPU-bbbb", 80.0, 0.5, "NVIDIA H100 80GB HBM3"),
    ("GPU-cccc", 80.0, 30.0, "NVIDIA H100 80GB HBM3"),
    ("GPU-dddd", 40.0, 0.0, "NVIDIA A100-SXM4-40GB"),
]


def test_nvml_lists_every_gpu_with_its_memory_and_what_others_use(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    nvml = install(monkeypatch, FOUR)
    inv = inventory()
    assert [(g.id, g.memory_gib, g.used_gib) for g in inv.gpus] == [
        ("0", 80.0, 0.5),
        ("1", 80.0, 0.5),
        ("2", 80.0, 30.0),
        ("3", 40.0, 0.0),
    ]
    assert inv.gpus[3].name == "NVIDIA A100-SXM4-40GB" and inv.source == "NVML"
    assert nvml.calls == ["init", "shutdown"]


@pytest.mark.parametrize(
    "visible, ids",
    [("2,0", ["2", "0"]), ("GPU-dddd", ["GPU-dddd"]), ("", [])],
)
def test_cuda_visible_devices_is_respected_and_its_entries_name_the_servers_gpus(monkeypatch, visible, ids):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    install(monkeypatch, FOUR)
    inv = inventory()
    assert [g.id for g in inv.gpus] == ids
    assert inv.source == f"NVML (CUDA_VISIBLE_DEVICES={visible})"
    if visible == "GPU-dddd":
        assert inv.gpus[0].memory_gib == 40.0
    if not ids:
        assert inv.notes == ("NVML shows no GPU",)


def test_an_unknown_visible_device_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "MIG-0000")
    install(monkeypatch, FOUR)
    with pytest.raises(UserError, match="CUDA_VISIBLE_DEVICES names 'MIG-0000'.*--gpus and --gpu-memory-gib"):
        inventory()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    with pytest.raises(UserError, match="names GPU 7, but NVML shows 4"):
        inventory()


@pytest.mark.parametrize("visible, uuid", [("0,0", "GPU-aaaa"), ("GPU-dddd,3", "GPU-dddd")])
def test_a_gpu_named_twice_in_cuda_visible_devices_is_one_clear_error(monkeypatch, visible, uuid):
    """CUDA shows no GPU for `0,0` and one for `UUID,0` of the same GPU (seen on an H200): a plan
    of two GPUs there would put two servers' memory on one."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", visible)
    install(monkeypatch, FOUR)
    first, second = visible.split(",")
    with pytest.raises(UserError, match=f"names one GPU twice \\({first} and {second} are both {uuid}\\)"):
        inventory()


def test_gpus_select_from_nvml_and_memory_overrides_it(monkeypatch):
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    install(monkeypatch, FOUR)
    inv = inventory(["1", "3"], 24.0)
    assert [(g.id, g.memory_gib) for g in inv.gpus] == [("1", 24.0), ("3", 24.0)]
    assert inventory(["3"]).gpus[0].memory_gib == 40.0
    with pytest.raises(UserError, match="--gpus names 9, which this machine does not show; visible: 0, 1, 2, 3"):
        inventory(["9"])


def test_declared_gpus_need_no_nvml(monkeypatch):
    uninstall(monkeypatch)
    inv = inventory(["0", "1"], 80)
    assert [(g.id, g.memory_gib, g.used_gib) for g in inv.gpus] == [("0", 80.0, 0.0), ("1", 80.0, 0.0)]
    assert inv.source == "declared: --gpus 0,1 --gpu-memory-gib 80"


def test_without_nvml_the_inventory_is_empty_and_says_how_to_get_one(monkeypatch):
    uninstall(monkeypatch)
    inv = inventory()
    assert inv.gpus == () and "pip install 'repair-harness[gpu]'" in inv.notes[0] and "--gpus" in inv.notes[0]
    with pytest.raises(UserError, match="--gpus without --gpu-memory-gib needs NVML"):
        inventory(["0"])
    with pytest.raises(UserError, match="--gpu-memory-gib needs --gpus here"):
        inventory(None, 80)


def test_nvml_without_a_driver_is_no_gpu_not_a_traceback(monkeypatch):
    install(monkeypatch, FOUR, fail_init=True)
    inv = inventory()
    assert inv.gpus == () and "NVML could not start (Driver Not Loaded)" in inv.notes[0]


def test_bad_declarations_are_refused(monkeypatch):
    uninstall(monkeypatch)
    with pytest.raises(UserError, match="must be positive"):
        inventory(["0"], 0)
    with pytest.raises(UserError, match="names a GPU twice"):
        inventory(["0", "0"], 80)


def test_the_estimate_of_a_bf16_preset_is_its_weights_kv_and_runtime():
    row = PRESETS.get("qwen2.5-7b")
    est = estimate(row.size, quantization=row.quantization, max_model_len=row.max_model_len)
    assert est.weights_gib == pytest.approx(7.62e9 * 2 / GIB)
    per_token = 2 * 28 * 4 * 128 * 2  # K and V, layers, KV heads, head dim, bf16
    assert est.kv_gib == pytest.approx(per_token * 8192 * KV_SEQUENCES / GIB)
    assert est.per_gpu_gib == pytest.approx(est.weights_gib + est.kv_gib + RUNTIME_GIB)
    assert est.inputs["kv_kib_per_token"] == 56 and "7.62B params x 2 B (bfloat16)" in est.describe()


def test_an_awq_preset_keeps_its_embeddings_in_16_bits_and_tp_splits_the_need():
    row = PRESETS.get("llama-3.1-8b-awq")
    one = estimate(row.size, quantization="awq", max_model_len=8192, tp=1)
    bits = 4 + 20 / 128
    assert one.weights_gib == pytest.approx(((8.03 - 1.05) * bits / 8 + 1.05 * 2) * 1e9 / GIB)
    assert one.inputs["embedding_params_b"] == 1.05 and one.inputs["weights_as"] == "awq"
    two = estimate(row.size, quantization="awq", max_model_len=8192, tp=2)
    assert two.per_gpu_gib == pytest.approx((one.weights_gib + one.kv_gib) / 2 + RUNTIME_GIB)


def test_every_preset_has_a_size_and_its_estimate_fits_an_80_gib_gpu():
    for name, row in PRESETS.items():
        assert row.size is not None, name
        est = estimate(row.size, quantization=row.quantization, max_model_len=row.max_model_len)
        assert 5 < est.per_gpu_gib < 80, (name, est.describe())


def test_an_unknown_quantization_needs_its_bits():
    row = PRESETS.get("qwen2.5-7b")
    with pytest.raises(UserError, match="weight_bits"):
        estimate(row.size, quantization="compressed-tensors", max_model_len=8192)
    sized = row.size.model_copy(update={"weight_bits": 8.0})
    assert estimate(sized, quantization="compressed-tensors", max_model_len=8192).inputs["bytes_per_param"] == 1


def test_a_share_is_rounded_up_to_the_hundredth():
    assert fraction_up(19.69, 80) == 0.25 and fraction_up(40, 80) == 0.5 and fraction_up(40.01, 80) == 0.51
