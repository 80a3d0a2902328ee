"""The GPUs a run may use, and how much memory each model's server needs on them.

Inventory: read from NVML (`nvidia-ml-py`, the `[gpu]` extra), restricted to the devices
`CUDA_VISIBLE_DEVICES` names, or declared (`--gpus 0,1 --gpu-memory-gib 80`), so that a plan can
be made on a laptop for a cluster node. A GPU's `id` is what a server's `CUDA_VISIBLE_DEVICES`
names it by: the entry of the parent's `CUDA_VISIBLE_DEVICES` (an index or a UUID), or its NVML
index where that variable is unset.

Estimate: weights (parameters x bytes per parameter of the dtype or quantization; quantized
checkpoints keep the embeddings and the LM head in 16 bits) + KV cache (2 x layers x KV heads x
head dim x bytes, per token, for `KV_SEQUENCES` sequences of `max_model_len`) split over the
tensor-parallel GPUs, + `RUNTIME_GIB` per GPU (CUDA context, activations, CUDA graphs). It is a
planning figure from the preset's numbers (its `size`, read from the model's config.json), not a
measurement: vLLM itself fills whatever its `--gpu-memory-utilization` leaves with KV cache.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs.errors import UserError

GIB = 2**30
# the KV headroom an estimate reserves: this many sequences of the full max_model_len
KV_SEQUENCES = 8
# per GPU, beside weights and KV cache: the CUDA context, activations and CUDA graphs
RUNTIME_GIB = 2.0
DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}
# bits per quantized weight: 4-bit weights with a 16-bit scale and a 4-bit zero per group of 128
QUANT_BITS = {
    "awq": 4 + 20 / 128,
    "awq_marlin": 4 + 20 / 128,
    "gptq": 4 + 20 / 128,
    "gptq_marlin": 4 + 20 / 128,
    "bitsandbytes": 4 + 32 / 64,  # NF4 with an fp32 absmax per block of 64
    "fp8": 8.0,
}
GPU_EXTRA = "pip install 'repair-harness[gpu]'"


class ModelSize(BaseModel):
    """What the estimate reads of a model (its config.json): a preset's `size`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    params_b: float = Field(gt=0, description="all parameters, in billions")
    # the input embeddings and the LM head (both, when untied): kept in 16 bits by AWQ/GPTQ checkpoints
    embedding_params_b: float = Field(0.0, ge=0)
    layers: int = Field(gt=0)
    kv_heads: int = Field(gt=0)
    head_dim: int = Field(gt=0)
    dtype: str = "bfloat16"  # of the unquantized weights and of the KV cache
    weight_bits: float | None = Field(None, gt=0, description="bits per quantized weight, where the table has none")


@dataclass(frozen=True)
class Estimate:
    """One server's memory need, with the inputs it came from (printed by the plan)."""

    weights_gib: float
    kv_gib: float
    runtime_gib: float
    tp: int
    inputs: dict[str, Any]

    @property
    def per_gpu_gib(self) -> float:
        return (self.weights_gib + self.kv_gib) / self.tp + self.runtime_gib

    def describe(self) -> str:
        i = self.inputs
        weights = f"{i['params_b']}B params x {i['bytes_per_param']:.3g} B ({i['weights_as']})"
        if i.get("embedding_params_b"):
            weights += f", {i['embedding_params_b']}B of them in 16 bits"
        return (
            f"weights {weights} = {self.weights_gib:.1f} GiB; KV {i['kv_kib_per_token']:.0f} KiB/token x "
            f"{i['max_model_len']} tokens x {i['kv_sequences']} sequences = {self.kv_gib:.1f} GiB; "
            f"split over tp {self.tp}, + {self.runtime_gib:g} GiB runtime per GPU = {self.per_gpu_gib:.1f} GiB per GPU"
        )


def estimate(size: ModelSize, *, quantization: str | None, max_model_len: int, tp: int = 1) -> Estimate:
    """The memory one server of this model needs on each of its `tp` GPUs."""
    dtype_bytes = DTYPE_BYTES.get(size.dtype)
    if dtype_bytes is None:
        raise UserError(f"unknown dtype {size.dtype!r} in a preset's size; known: {', '.join(DTYPE_BYTES)}")
    if quantization:
        bits = size.weight_bits or QUANT_BITS.get(quantization)
        if bits is None:
            raise UserError(
                f"no bits per weight known for quantization {quantization!r}: give the preset's size a weight_bits"
            )
        dense = min(size.embedding_params_b, size.params_b)
        quant_bytes = bits / 8
        weights = ((size.params_b - dense) * quant_bytes + dense * 2) * 1e9
        bytes_per_param, weights_as = quant_bytes, quantization
    else:
        dense = 0.0
        weights = size.params_b * dtype_bytes * 1e9
        bytes_per_param, weights_as = dtype_bytes, size.dtype
    kv_bytes = 2 * size.layers * size.kv_heads * size.head_dim * min(dtype_bytes, 2)
    kv = kv_bytes * max_model_len * KV_SEQUENCES
    return Estimate(
        weights_gib=weights / GIB,
        kv_gib=kv / GIB,
        runtime_gib=RUNTIME_GIB,
        tp=tp,
        inputs={
            "params_b": size.params_b,
            "embedding_params_b": dense,
            "bytes_per_param": bytes_per_param,
            "weights_as": weights_as,
            "kv_kib_per_token": kv_bytes / 1024,
            "max_model_len": max_model_len,
            "kv_sequences": KV_SEQUENCES,
            "runtime_gib": RUNTIME_GIB,
            "tp": tp,
        },
    )


@dataclass(frozen=True)
class Gpu:
    id: str  # what a server's CUDA_VISIBLE_DEVICES names it by
    memory_gib: float
    used_gib: float = 0.0  # taken by other processes when the inventory was read (NVML)
    name: str = ""


@dataclass(frozen=True)
class Inventory:
    gpus: tuple[Gpu, ...]
    source: str  # where the list came from, as the plan prints it
    notes: tuple[str, ...] = field(default_factory=tuple)

    def get(self, gpu_id: str) -> Gpu:
        return next(g for g in self.gpus if g.id == gpu_id)


def _visible() -> list[str] | None:
    """The entries of CUDA_VISIBLE_DEVICES; None where it is unset ("" hides every GPU)."""
    raw = os.environ.get("CUDA_VISIBLE_DEVICES")
    if raw is None:
        return None
    return [v.strip() for v in raw.split(",") if v.strip()]


def _nvml() -> Any:
    try:
        import pynvml  # nvidia-ml-py
    except ImportError:
        return None
    return pynvml


def inventory(gpus: list[str] | None = None, memory_gib: float | None = None) -> Inventory:
    """The GPUs of this run: declared (both flags), else NVML's (with `memory_gib` overriding
    what it reads); none, with the reason in `notes`, where there is no NVML or no GPU."""
    if memory_gib is not None and memory_gib <= 0:
        raise UserError(f"--gpu-memory-gib must be positive, got {memory_gib:g}")
    if gpus is not None and len(set(gpus)) != len(gpus):
        raise UserError(f"--gpus names a GPU twice: {','.join(gpus)}")
    if gpus is not None and memory_gib is not None:
        declared = tuple(Gpu(g, float(memory_gib)) for g in gpus)
        return Inventory(declared, f"declared: --gpus {','.join(gpus)} --gpu-memory-gib {memory_gib:g}")
    found, why = _from_nvml()
    if found is None:
        if gpus is not None:
            raise UserError(
                f"--gpus without --gpu-memory-gib needs NVML to read the memory ({why}); give --gpu-memory-gib"
            )
        if memory_gib is not None:
            raise UserError(f"--gpu-memory-gib needs --gpus here ({why}): name the GPUs, e.g. --gpus 0,1")
        return Inventory((), "none", (why,))
    if gpus is not None:
        unknown = [g for g in gpus if g not in {x.id for x in found}]
        if unknown:
            raise UserError(
                f"--gpus names {', '.join(unknown)}, which this machine does not show; "
                f"visible: {', '.join(x.id for x in found) or 'none'}"
            )
        found = tuple(x for x in found if x.id in gpus)
    if memory_gib is not None:
        found = tuple(Gpu(x.id, float(memory_gib), x.used_gib, x.name) for x in found)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    source = "NVML" + (f" (CUDA_VISIBLE_DEVICES={visible})" if visible is not None else "")
    return Inventory(found, source, () if found else ("NVML shows no GPU",))


def _from_nvml() -> tuple[tuple[Gpu, ...] | None, str]:
    """NVML's GPUs (the visible ones), or None and why not."""
    nvml = _nvml()
    if nvml is None:
        return None, f"nvidia-ml-py is not installed ({GPU_EXTRA}), and no GPUs were declared with --gpus"
    try:
        nvml.nvmlInit()
    except Exception as exc:  # NVMLError: no driver, no library; any failure means no inventory
        return None, f"NVML could not start ({exc}): no NVIDIA driver here; declare the GPUs with --gpus"
    try:
        count = nvml.nvmlDeviceGetCount()
        entries = _visible()
        wanted = [str(i) for i in range(count)] if entries is None else entries
        out: list[Gpu] = []
        named: dict[str, str] = {}  # uuid -> the entry that named it first
        for entry in wanted:
            handle = _handle(nvml, entry, count)
            uuid = _text(nvml.nvmlDeviceGetUUID(handle))
            if uuid in named:
                # CUDA shows no GPU for `0,0` and one for `UUID,0` (seen on an H200): a plan of two
                # would put two servers' memory on one GPU
                raise UserError(
                    f"CUDA_VISIBLE_DEVICES names one GPU twice ({named[uuid]} and {entry} are both {uuid}): "
                    "name each GPU once"
                )
            named[uuid] = entry
            mem = nvml.nvmlDeviceGetMemoryInfo(handle)
            name = nvml.nvmlDeviceGetName(handle)
            out.append(
                Gpu(
                    entry,
                    mem.total / GIB,
                    mem.used / GIB,
                    _text(name),
                )
            )
        return tuple(out), ""
    finally:
        try:
            nvml.nvmlShutdown()
        except Exception:  # shutting NVML down is best effort
            pass


def _text(value: Any) -> str:
    """NVML's strings: bytes from nvidia-ml-py before 11.515, str since."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _handle(nvml: Any, entry: str, count: int) -> Any:
    """The NVML handle of a CUDA_VISIBLE_DEVICES entry: an index or a (GPU-/MIG-) UUID."""
    if entry.isdigit():
        if int(entry) >= count:
            raise UserError(f"CUDA_VISIBLE_DEVICES names GPU {entry}, but NVML shows {count}")
        return nvml.nvmlDeviceGetHandleByIndex(int(entry))
    try:
        return nvml.nvmlDeviceGetHandleByUUID(entry)
    except Exception:
        raise UserError(
            f"CUDA_VISIBLE_DEVICES names {entry!r}, which NVML does not know; declare the GPUs with --gpus "
            "and --gpu-memory-gib"
        ) from None


def fraction_up(gib: float, total_gib: float) -> float:
    """`gib` of `total_gib` as a --gpu-memory-utilization, rounded up to the hundredth."""
    return math.ceil(gib / total_gib * 100 - 1e-9) / 100
