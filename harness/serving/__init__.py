"""Serving: everything that turns a model name into a live `Backend`.

What a name means (`models`: the model kinds, a registry), the backends that talk to a model
(`backends/`: the OpenAI-compatible client and its transport, the answer parser), the servers
the harness starts (`llama/`: the embedded llama.cpp server, its build check and GGUF files;
`vllm/`: presets, `vllm serve`, vLLM in-process), where they run (`gpus`, `placement`), how
many episodes each takes at once (`batch`) and the check of a served model before a run
(`preflight`). The runner knows none of it but what this front door gives.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.serving.backends.base import Backend, ToolMode
    from harness.serving.backends.constrain import unenforced
    from harness.serving.batch import Lane
    from harness.serving.kinds import describe_models
    from harness.serving.llama.doctor import diagnose
    from harness.serving.llama.local import LOCAL_MODEL, LlamaSettings, LocalServer, local_model_name
    from harness.serving.models import ModelPool, validate_model
    from harness.serving.placement import Plan, describe_phase, render, to_json
    from harness.serving.placement import plan as plan_servers
    from harness.serving.preflight import check_lines, check_models, check_served, failure
    from harness.serving.serve_auth import DEFAULT_KEY_ENV, VLLM_KEY_ENV, WAIVER_FLAG, serve_key
    from harness.serving.server_proc import ManagedServer
    from harness.serving.vllm.presets import VllmServer, preset_row, vllm_command
    from harness.serving.vllm.table import PRESET_ROWS

# the name outside -> (the module that defines it, its name there); imported on first use (PEP
# 562), so that `--help` and the listings pay for none of it (benchmarks/startup.py)
_HOME: dict[str, tuple[str, str]] = {
    **{n: ("backends.base", n) for n in ("Backend", "ToolMode")},
    "unenforced": ("backends.constrain", "unenforced"),
    "Lane": ("batch", "Lane"),
    "describe_models": ("kinds", "describe_models"),
    "diagnose": ("llama.doctor", "diagnose"),
    **{n: ("llama.local", n) for n in ("LOCAL_MODEL", "LlamaSettings", "LocalServer", "local_model_name")},
    **{n: ("models", n) for n in ("ModelPool", "validate_model")},
    **{n: ("placement", n) for n in ("Plan", "describe_phase", "render", "to_json")},
    "plan_servers": ("placement", "plan"),
    **{n: ("preflight", n) for n in ("check_lines", "check_models", "check_served", "failure")},
    **{n: ("serve_auth", n) for n in ("DEFAULT_KEY_ENV", "VLLM_KEY_ENV", "WAIVER_FLAG", "serve_key")},
    "ManagedServer": ("server_proc", "ManagedServer"),
    **{n: ("vllm.presets", n) for n in ("VllmServer", "preset_row", "vllm_command")},
    "PRESET_ROWS": ("vllm.table", "PRESET_ROWS"),
}
__all__ = [
    "Backend",
    "DEFAULT_KEY_ENV",
    "LOCAL_MODEL",
    "LlamaSettings",
    "Lane",
    "LocalServer",
    "ManagedServer",
    "ModelPool",
    "PRESET_ROWS",
    "Plan",
    "ToolMode",
    "VLLM_KEY_ENV",
    "VllmServer",
    "WAIVER_FLAG",
    "check_lines",
    "check_models",
    "check_served",
    "describe_models",
    "describe_phase",
    "diagnose",
    "failure",
    "local_model_name",
    "plan_servers",
    "preset_row",
    "render",
    "serve_key",
    "to_json",
    "unenforced",
    "validate_model",
    "vllm_command",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attr = _HOME[name]
    value = getattr(import_module(f"{__name__}.{module}"), attr)
    globals()[name] = value  # once imported, a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})
