"""`repair-harness serve`: run a model server in the foreground until Ctrl-C.

  serve local                      the embedded CPU model (llama-cpp-python, SmolLM2-135M)
  serve vllm --preset NAME         vLLM on GPUs, flags from the preset table
  serve vllm --model ORG/NAME --tool-parser P
  serve vllm --model local         vLLM (the CPU build too) on the embedded SmolLM2, converted from its GGUF

Bad input (an unknown preset, a flag vLLM would reject, a missing extra) is a `UserError`: one line
on stderr and exit code 2. A server that does not answer in time is a `ServerStartError` (exit code 1);
one that dies, a signal or an exit of its own, is a `ServerDied` (exit code 3: what killed it, its log, the fix).
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import typer

from envs.errors import UserError
from harness.cli.common import EXIT_INTERRUPTED, group
from harness.defaults import N_CTX
from harness.interrupts import terminate_as_interrupt
from harness.serving import DEFAULT_KEY_ENV, PRESET_ROWS, VLLM_KEY_ENV, WAIVER_FLAG, serve_key

if TYPE_CHECKING:
    from harness.serving import ManagedServer

app = group("serve", help="Serve a model: the embedded CPU model or vLLM.")


def _hold(server: ManagedServer) -> None:
    """Keep the server up until Ctrl-C or SIGTERM; stop it on every way out."""
    from harness.cli.common import out  # out/err: rich consoles made on use (common.__getattr__): not for --help

    received: list[int] = []
    try:
        with terminate_as_interrupt() as received, server:
            out.print(f"[green]ready[/green] in {server.startup_s:.1f} s: {server.base_url}", highlight=False)
            out.print(f"models: {', '.join(server.model_names)}", highlight=False)
            out.print("Ctrl-C stops it.")
            server.wait()
    except KeyboardInterrupt:
        out.print("stopped.")
        if received:
            raise typer.Exit(EXIT_INTERRUPTED[received[0]]) from None


KEY_ENV_HELP = "environment variable holding the key the server demands (required beyond loopback)"
WAIVER_HELP = "serve beyond loopback with no key (only on a closed network: anyone who reaches the port uses it)"


@app.command()
def local(
    port: int | None = typer.Option(None, help="port (default: a free one)"),
    host: str = typer.Option("127.0.0.1", help="address to bind; beyond loopback a key is required"),
    n_ctx: int = typer.Option(N_CTX, help="context length in tokens"),
    threads: int = typer.Option(2, help="CPU threads"),
    api_key_env: str = typer.Option(DEFAULT_KEY_ENV, help=KEY_ENV_HELP),
    insecure_no_key: bool = typer.Option(False, WAIVER_FLAG, help=WAIVER_HELP),
) -> None:
    """The embedded model: SmolLM2-135M-Instruct on the CPU, one server, two aliases."""
    # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.cli.common import out

    # the serving front door imports its modules on use: not for --help
    from harness.serving import LlamaSettings, LocalServer, local_model_name

    if port is not None and not 1 <= port <= 65535:
        raise UserError(f"--port must be in 1..65535, got {port}")
    key = serve_key(host, api_key_env, insecure_no_key)
    server = LocalServer(port=port, settings=LlamaSettings(n_ctx=n_ctx, n_threads=threads), host=host, api_key=key)
    if key:
        out.print(f"requests must carry the key in ${api_key_env} (run --api-key-env {api_key_env})", highlight=False)
    out.print(f"prompt mode: --model {local_model_name('prompt')}   native mode: --model {local_model_name('native')}")
    _hold(server)


@app.command()
def vllm(
    preset: str | None = typer.Option(None, help=f"one of: {', '.join(PRESET_ROWS)}"),
    model: str | None = typer.Option(None, help="local (the embedded SmolLM2), a preset's HF id, or any org/name id"),
    tp: int = typer.Option(1, help="tensor-parallel size (GPUs per replica, a power of two)"),
    dp: int = typer.Option(1, help="data-parallel size (replicas)"),
    port: int = typer.Option(8000),
    host: str = typer.Option("127.0.0.1", help="0.0.0.0 to serve other machines (then a key is required)"),
    api_key_env: str = typer.Option(DEFAULT_KEY_ENV, help=KEY_ENV_HELP),
    insecure_no_key: bool = typer.Option(False, WAIVER_FLAG, help=WAIVER_HELP),
    tool_parser: str | None = typer.Option(None, help="vLLM tool parser (needed with --model)"),
    chat_template: str | None = typer.Option(None, help="chat template file, overrides the preset's"),
    max_model_len: int | None = typer.Option(None, help="overrides the preset's (8192)"),
    native_tools: bool = typer.Option(True, "--native-tools/--no-native-tools", help="serve with tool parsing on"),
    dry_run: bool = typer.Option(False, "--dry-run", help="print the command and exit"),
) -> None:
    """vLLM's OpenAI-compatible server for a preset or a model id, checked before launch."""
    # out/err: rich consoles made on use (common.__getattr__): not for --help
    from harness.cli.common import out
    from harness.serving import VllmServer, preset_row, vllm_command  # pydantic: not for help

    name = preset or model
    if name is None or (preset is None) == (model is None):
        raise UserError(f"give exactly one of --preset (one of: {', '.join(PRESET_ROWS)}) or --model ORG/NAME")
    if model is not None and "/" not in model and model != "local":
        raise UserError(
            f"--model takes local or a Hugging Face id of the form org/name, got {model!r} (presets go to --preset)"
        )
    row = preset_row(
        name,
        tool_parser=tool_parser,
        chat_template=chat_template,
        max_model_len=max_model_len,
        native_tools=native_tools,
    )
    key = serve_key(host, api_key_env, insecure_no_key)
    cmd = vllm_command(row, tp=tp, dp=dp, port=port, host=host, native_tools=native_tools)
    if dry_run:
        out.print(_shown(cmd, api_key_env if key else None), highlight=False, soft_wrap=True)
        return
    server = VllmServer(row, tp=tp, dp=dp, port=port, host=host, native_tools=native_tools, api_key=key)
    out.print(_shown(server.command, api_key_env if key else None), highlight=False, soft_wrap=True)
    _hold(server)


def _shown(cmd: list[str], key_env: str | None) -> str:
    """The command as a shell line; the key appears as the variable's name, never its value."""
    line = shlex.join(cmd)
    return f'{VLLM_KEY_ENV}="${key_env}" {line}' if key_env else line
