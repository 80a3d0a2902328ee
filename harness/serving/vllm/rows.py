"""The vLLM presets as validated rows: the row type (`VllmPreset`), the registry of them
(`PRESETS`, the table's rows and a plugin's) and how a plugin adds one (`register_preset`)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from envs.registry import Registry
from harness.serving.gpus import ModelSize
from harness.serving.vllm.table import PRESET_ROWS


class VllmPreset(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    hf_id: str
    tool_parser: str
    chat_template: str | None = None
    max_model_len: int = 8192
    quantization: str | None = None
    extra_flags: tuple[str, ...] = ()
    # a local folder vLLM loads instead of fetching hf_id (which stays the served name)
    weights: str | None = None
    # vLLM engine arguments, given to `vllm serve` as flags and to `vllm.LLM` as keywords
    engine: dict[str, Any] = Field(default_factory=dict)
    # environment of the vLLM process (the in-process backend sets missing ones in its own)
    env: dict[str, str] = Field(default_factory=dict)
    note: str = ""
    study: bool = Field(False, description="one of the paper's models")
    # what the GPU memory estimate reads (harness.serving.gpus); None: the server is given whole GPUs
    size: ModelSize | None = None
    # GPUs per server (vLLM's --tensor-parallel-size); the plan doubles it where one GPU is too small
    tp: int = Field(1, ge=1)

    def engine_args(self) -> dict[str, Any]:
        """What vLLM loads this row with, the one list of it: `vllm serve`'s flags (presets.vllm_command)
        and `vllm.LLM`'s keywords (inproc) alike. The paper's settings (the context length, the
        quantization, vLLM's decoding defaults rather than the model's generation_config.json),
        then the row's own engine arguments."""
        core: dict[str, Any] = {"max_model_len": self.max_model_len, "generation_config": "vllm"}
        if self.quantization:
            core["quantization"] = self.quantization
        return {**core, **self.engine}


PRESETS: Registry[VllmPreset] = Registry("vLLM preset")


def register_preset(preset: VllmPreset) -> VllmPreset:
    """Add a vLLM preset (a plugin's model): `serve vllm --preset NAME` and `run --model NAME` know it."""
    return PRESETS.register(preset.name, preset)


# the table (harness.serving.vllm.table), each row validated
for _name, _row in PRESET_ROWS.items():
    register_preset(VllmPreset(name=_name, **_row))
