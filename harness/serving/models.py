"""The checks of a model against the run spec, and the one factory that opens its backends.

What a name means is its kind's (`harness.serving.kinds`). Backends (`ModelPool.open`): an
OpenAI-compatible client per endpoint; with no endpoint, a server the harness starts for the run
(llama.cpp for `local` and `gguf:`, `vllm serve` for presets); with `--backend vllm`, vLLM
in-process; a reference agent plays in this process.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from envs.errors import UnknownName, UserError
from harness import defaults
from harness.agents import get_agent
from harness.run_spec import RunSpec
from harness.serving.backends.base import Backend
from harness.serving.batch import Lane
from harness.serving.kinds import LOCAL, MODEL_ID, ModelRef, describe_models, known_models, preset_names, resolve
from harness.serving.llama.gguf import GgufError
from harness.serving.llama.local import NATIVE_ALIAS, PROMPT_ALIAS
from harness.serving.vllm.inproc import VllmInprocBackend
from harness.serving.vllm.presets import VllmServer

if TYPE_CHECKING:  # the openai SDK (half a second to import) only when a run opens a client
    from harness.serving.backends.constrain import Style
    from harness.serving.backends.openai_compat import OpenAIBackend


class CannotConstrain(UserError):
    """`--constrain json|schema` for a player whose decoding the harness cannot constrain."""


def check_constrain(ref: ModelRef, spec: RunSpec) -> None:
    """Refuse at start what cannot constrain its decoding, naming what is unsupported."""
    arms = [a for a in spec.constrain if a != "none"]
    if not arms:
        return
    if ref.kind.in_process:
        raise CannotConstrain(
            f"--constrain {','.join(arms)}: {ref.name} is a reference agent, which decodes nothing; "
            "play the reference agents in a grid with --constrain none"
        )
    if spec.backend == "vllm":
        raise CannotConstrain(
            f"--constrain {','.join(arms)}: --backend vllm (in-process) does not constrain decoding; "
            "serve the model (`repair-harness serve vllm --model ...`) and pass its --endpoint"
        )
    if spec.tool_mode == "native" and ref.kind.server == "llama.cpp" and not spec.endpoints:
        raise CannotConstrain(
            f"--constrain {','.join(arms)}: llama.cpp's server does not constrain native tool calls "
            f"({ref.name}); use --tool-mode prompt, where the answer is constrained to the tools' schema"
        )


def validate_model(name: str, spec: RunSpec) -> None:
    """Refuse, before anything runs, a model this spec cannot reach."""
    ref = resolve(name)
    check_constrain(ref, spec)
    if ref.kind.in_process:
        return  # played in-process, whatever the endpoints and backend say
    if ref.kind.own_server_only and (spec.endpoints or spec.backend == "vllm"):
        raise GgufError(
            f"{name}: a gguf: model is served by the harness's own llama.cpp server; "
            "drop --endpoint and --backend vllm for it (or run it in a grid of its own)"
        )
    if spec.backend == "vllm":
        from harness.serving.vllm.presets import check_vllm  # read when called: tests replace check_vllm

        check_vllm()
        if ref.kind is MODEL_ID and spec.tool_mode == "native":
            raise UnknownName(
                "model for --backend vllm in native mode (its tool parser must be known)",
                name,
                [LOCAL, *preset_names()],
            )
        return
    if spec.endpoints or ref.kind is not MODEL_ID:
        return
    raise UnknownName(
        "model (no --endpoint given, so it must be one of these)", name, known_models(), listing=describe_models()
    )


class ModelPool:
    """The backend factory: per model of the spec, one backend per endpoint, starting servers or
    loading vLLM in-process where the spec asks for it. What a model opened is closed by `close`
    (its server stops), and everything still open by `stack`. `warn` hears, once per server, what
    a server sent that the harness did not believe."""

    def __init__(self, spec: RunSpec, stack: contextlib.AsyncExitStack, warn: Callable[[str], None] | None = None):
        self.spec, self.outer, self.warn = spec, stack, warn
        self.served: dict[str, dict[str, Any]] = {}
        self.servers: dict[str, Any] = {}  # base URL -> the ManagedServer started for the run
        self._stacks: dict[str, contextlib.AsyncExitStack] = {}
        self.stack = stack  # the stack of the model being opened

    async def open(self, name: str, placed: Any = None) -> list[Backend]:
        """The backends of one model; `placed`: its server's plan (harness.serving.placement.ServerPlan)."""
        own = contextlib.AsyncExitStack()
        self._stacks[name] = await self.outer.enter_async_context(own)
        self.stack = own
        try:
            return await self._open(name, placed)
        finally:
            self.stack = self.outer

    async def close(self, name: str) -> None:
        """Close a model's clients and stop the server started for it (its episodes are done)."""
        own = self._stacks.pop(name, None)
        if own is not None:
            await own.aclose()
            self.servers = {url: s for url, s in self.servers.items() if s.alive()}

    def lane(self, backend: Backend) -> Lane:
        """A fixed lane (--concurrency, else the default), or for a vLLM server the harness started,
        one that keeps its batch full (harness.serving.batch), bounded by --concurrency."""
        url = getattr(backend, "base_url", None)
        server = self.servers.get(url) if url else None
        if isinstance(server, VllmServer):
            return Lane(metrics_url=f"{server.root_url}/metrics", bound=self.spec.concurrency)
        if self.spec.concurrency is None and server is not None and server.serial:
            return Lane(1)  # a server that answers one request at a time: one episode at a time
        return Lane(self.spec.concurrency or defaults.CONCURRENCY)

    def _client(self, url: str, model: str, flatten: bool = False, style: Style = "openai") -> OpenAIBackend:
        # openai, aiohttp: only when a run opens a client
        from harness.serving.backends.openai_compat import OpenAIBackend

        server = self.servers.get(url)

        return OpenAIBackend(
            url,
            model,
            api_key_env=self.spec.api_key_env,
            timeout_s=self.spec.request_timeout_s,
            max_retries=self.spec.max_retries,
            text_calls=self.spec.text_calls,
            max_response_mib=self.spec.max_response_mib,
            constrain_style=style,
            # llama.cpp's chatml formats render no tool turns (see harness.serving.llama.local)
            flatten_tool_turns=flatten,
            server_died=server.died if server is not None else None,
            warn=self.warn,
        )

    async def _open(self, name: str, placed: Any) -> list[Backend]:
        ref = resolve(name)
        if ref.kind.in_process:
            agent = get_agent(name)
            self.served[name] = {"backend": "reference-agent", "model_id": await agent.model_id()}
            return [agent]
        if self.spec.backend == "vllm":
            return [await self._inproc(ref)]
        urls = list(self.spec.endpoints) or [await self._serve(ref, placed)]
        clients: list[OpenAIBackend] = []
        ids: dict[str, list[str]] = {}
        served_name = ""
        for url in urls:
            probe = self._client(url, "")
            self.stack.push_async_callback(probe.aclose)
            ids[url] = await probe.served_models()
            served_name = self._served_name(ref, ids[url], url)
            # llama.cpp's server: the embedded model's aliases, or a GGUF file (only ever on ours)
            llama = served_name in (PROMPT_ALIAS, NATIVE_ALIAS) or (
                ref.kind.own_server_only and ref.kind.server == "llama.cpp"
            )
            client = self._client(
                url,
                served_name,
                flatten=served_name in (PROMPT_ALIAS, NATIVE_ALIAS),
                style="llama.cpp" if llama else "openai",
            )
            self.stack.push_async_callback(client.aclose)
            clients.append(client)
        self.served[name] = {
            "backend": "openai",
            "served_name": served_name,
            "endpoints": urls,
            "model_ids": ids,
            "constrain_style": clients[0].constrain_style,
            **(_placement(placed) if placed is not None else {}),
        }
        return list(clients)

    def _served_name(self, ref: ModelRef, ids: list[str], url: str) -> str:
        """The first name the endpoint answers to, of those its kind's server may answer to."""
        candidates = ref.kind.served_as(ref, self.spec.tool_mode)
        for c in candidates:
            if c in ids:
                return c
        raise UnknownName(f"model at {url}", candidates[0], ids)

    async def _serve(self, ref: ModelRef, placed: Any = None) -> str:
        """Start the server this model needs until its episodes are done; its base URL."""
        if ref.kind.start is None:  # validate_model refused it: a model id needs an --endpoint
            raise UnknownName("model to serve", ref.name, known_models())
        where = {"tp": placed.tp, "gpus": placed.gpus, "gpu_memory_utilization": placed.utilization} if placed else {}
        server = ref.kind.start(ref, self.spec.tool_mode == "native", where)
        await self.stack.enter_async_context(server)
        self.servers[server.base_url] = server
        return server.base_url

    async def _inproc(self, ref: ModelRef) -> Backend:
        backend = VllmInprocBackend(
            ref.kind.inproc(ref), text_calls=self.spec.text_calls, native_tools=self.spec.tool_mode == "native"
        )
        self.stack.push_async_callback(backend.aclose)
        self.served[ref.name] = {
            "backend": "vllm-inproc",
            "model_id": await backend.model_id(),
            "weights": backend.preset.weights or backend.preset.hf_id,
        }
        return backend


def _placement(placed: Any) -> dict[str, Any]:
    """What run.json keeps of a server's placement."""
    out: dict[str, Any] = {"server": placed.kind}
    if placed.gpus:
        out |= {"gpus": list(placed.gpus), "gpu_memory_utilization": placed.utilization, "tp": placed.tp}
    if placed.estimate is not None:
        out["memory_gib"] = round(placed.estimate.per_gpu_gib, 2)
    return out
