"""What a `--model` name means: the model kinds, one registry (`MODEL_KINDS`) like the others.

Each kind says which names are its own (`claims`), what `--model`'s listing puts them under, the
server the harness starts for it when no `--endpoint` is given (`start`, and which: `server`),
the names that server may answer to, and what vLLM in-process loads for it. A name is the first
registered kind's that claims it; a name no kind claims is a model id (`MODEL_ID`), served by
the given `--endpoint`s or loaded by vLLM in-process. The checks and the backends the runner
opens read the kind's fields (`harness.serving.models`); nothing compares kind names.

Names:
  `local`         the embedded SmolLM2-135M-Instruct: llama.cpp serves the shipped GGUF; on
                  `--backend vllm` (or `serve vllm --model local`) vLLM serves the same weights,
                  turned into a Hugging Face folder in the cache on first use.
  `gguf:PATH`     any local GGUF file, served by the embedded llama.cpp server with its own
                  chat template.
  a preset        a vLLM preset, by its name or its HF id (`qwen2.5-coder-14b-awq` and
                  `Qwen/Qwen2.5-Coder-14B-Instruct-AWQ` are the same model).
  `agent:NAME`    a reference agent (`agent:gold`, `agent:reader`, `agent:random`; harness.agents):
                  no model, no server; it plays the task's known solution through the same loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from envs.registry import Registry
from harness.agents import AGENTS, get_agent, is_agent
from harness.serving.llama.gguf import GgufServer, gguf_file, is_gguf_name, served_alias
from harness.serving.llama.local import LOCAL_MODEL as LOCAL
from harness.serving.llama.local import LocalServer, local_model_name
from harness.serving.server_proc import free_port
from harness.serving.vllm.local_hf import HF_ID
from harness.serving.vllm.presets import VllmServer
from harness.serving.vllm.rows import PRESETS

if TYPE_CHECKING:
    from harness.serving.backends.base import ToolMode

ServerKind = Literal["llama.cpp", "vllm"]


@dataclass(frozen=True)
class ModelRef:
    name: str  # as the user wrote it: the records' model key
    kind: ModelKind
    gguf: Path | None = None
    preset: Any = None  # the VllmPreset row of a preset


@dataclass(frozen=True)
class ModelKind:
    name: str
    heading: str  # what `--model`'s listing puts its names under ("" for a model id: not listed)
    names: Callable[[], list[str]]
    claims: Callable[[str], ModelRef | None]
    # the server the harness starts for it with no --endpoint (None: it starts none), and how
    server: ServerKind | None = None
    # (ref, native tools, its placement: tp, gpus, memory share; a server that places nothing ignores it)
    start: Callable[[ModelRef, bool, dict[str, Any]], Any] | None = None
    # the names its server may answer to, first preferred, by the run's tool mode
    served_as: Callable[[ModelRef, ToolMode], list[str]] = lambda ref, _mode: [ref.name]
    # what vLLM in-process loads for it: a preset row, or a name
    inproc: Callable[[ModelRef], Any] = lambda ref: ref.name
    # played in this process by the harness (a reference agent): no server, no decoding
    in_process: bool = False
    # only the harness's own server can serve it (a GGUF file): no --endpoint, no vLLM
    own_server_only: bool = False


def _local_served_as(ref: ModelRef, mode: ToolMode) -> list[str]:
    """llama.cpp's alias of the tool mode (`serve local`), or vLLM's served names (`serve vllm --model local`)."""
    return [local_model_name(mode), LOCAL, HF_ID]


def _start_local(ref: ModelRef, native: bool, where: dict[str, Any]) -> Any:
    return LocalServer()


def _start_gguf(ref: ModelRef, native: bool, where: dict[str, Any]) -> Any:
    assert ref.gguf is not None  # the gguf kind's claim sets it
    return GgufServer(ref.gguf)


def _gguf_served_as(ref: ModelRef, mode: ToolMode) -> list[str]:
    assert ref.gguf is not None
    return [served_alias(ref.gguf)]


def _start_vllm(ref: ModelRef, native: bool, where: dict[str, Any]) -> Any:
    return VllmServer(ref.preset, port=free_port(), native_tools=native, **where)


def preset_names() -> list[str]:
    return sorted(PRESETS)


def _claim_preset(name: str) -> ModelRef | None:
    row = PRESETS.get(name) if name in PRESETS else next((p for _, p in PRESETS.items() if p.hf_id == name), None)
    return ModelRef(name, PRESET, preset=row) if row else None


def _agent_names() -> list[str]:
    return list(AGENTS)


def _claim_agent(name: str) -> ModelRef | None:
    if not is_agent(name):
        return None
    get_agent(name)  # an unknown agent name is refused here, with the known ones
    return ModelRef(name, AGENT)


MODEL_KINDS: Registry[ModelKind] = Registry("model kind")
EMBEDDED: ModelKind = MODEL_KINDS.register(
    "local",
    ModelKind(
        "local",
        "embedded",
        lambda: [LOCAL],
        lambda name: ModelRef(name, EMBEDDED) if name == LOCAL else None,
        server="llama.cpp",
        start=_start_local,
        served_as=_local_served_as,
        inproc=lambda ref: LOCAL,
    ),
)
GGUF: ModelKind = MODEL_KINDS.register(
    "gguf",
    ModelKind(
        "gguf",
        "GGUF files",
        lambda: ["gguf:PATH"],
        lambda name: ModelRef(name, GGUF, gguf=gguf_file(name)) if is_gguf_name(name) else None,
        server="llama.cpp",
        start=_start_gguf,
        served_as=_gguf_served_as,
        own_server_only=True,
    ),
)
PRESET: ModelKind = MODEL_KINDS.register(
    "preset",
    ModelKind(
        "preset",
        "vLLM presets",
        preset_names,
        _claim_preset,
        server="vllm",
        start=_start_vllm,
        served_as=lambda ref, _mode: [ref.preset.hf_id, ref.preset.name],
        inproc=lambda ref: ref.preset,
    ),
)
AGENT: ModelKind = MODEL_KINDS.register(
    "agent", ModelKind("agent", "reference agents", _agent_names, _claim_agent, in_process=True)
)
# any other name: what the endpoints serve (or vLLM in-process loads) under that id
MODEL_ID: ModelKind = ModelKind("id", "", lambda: [], lambda name: ModelRef(name, MODEL_ID))


def resolve(name: str) -> ModelRef:
    """What a model name means; a gguf: path is checked here (exists, is a GGUF)."""
    for _, kind in MODEL_KINDS.items():
        ref = kind.claims(name)
        if ref is not None:
            return ref
    return ModelRef(name, MODEL_ID)


def model_kinds() -> dict[str, list[str]]:
    """The names `--model` takes, under the heading of their kind."""
    return {kind.heading: kind.names() for _, kind in MODEL_KINDS.items()}


def known_models() -> list[str]:
    return [name for names in model_kinds().values() for name in names]


def describe_models() -> str:
    """The kinds on one line: `embedded: local; GGUF files: gguf:PATH; vLLM presets: ...`."""
    return (
        "; ".join(f"{kind}: {', '.join(names)}" for kind, names in model_kinds().items())
        + "; or a model id served by --endpoint"
    )
