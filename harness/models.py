"""Which model a name means, and how to reach it.

`local`: the embedded SmolLM2-135M, served for the length of the run by llama.cpp's server.
A vLLM preset name: its HF id, on the given endpoints, or on a `vllm serve` started for the run.
Any other name: a model id served by the given `--endpoint`s (checked against /v1/models).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from envs import UnknownName
from harness.backends.base import Backend, HarnessError
from harness.backends.local import LOCAL_MODEL as LOCAL
from harness.backends.local import LocalServer, local_model_name
from harness.types import RunSpec

if TYPE_CHECKING:  # the openai SDK (half a second to import) only when a run opens a client
    from harness.backends.openai_compat import OpenAIBackend


def preset_names() -> list[str]:
    from harness.backends.vllm_presets import PRESETS

    return sorted(PRESETS)


def known_models() -> list[str]:
    return [LOCAL, *preset_names()]


def validate_model(name: str, spec: RunSpec) -> None:
    """Without endpoints a model must be one the harness can serve itself."""
    if spec.endpoints or spec.backend == "vllm" or name in known_models():
        return
    raise UnknownName("model (no --endpoint given, so a preset is needed)", name, known_models())


class ModelPool:
    """Opens, per model of the spec, one backend per endpoint (starting servers where needed)."""

    def __init__(self, spec: RunSpec, stack: contextlib.AsyncExitStack):
        self.spec, self.stack = spec, stack
        self.served: dict[str, dict[str, Any]] = {}

    def _client(self, url: str, model: str, local: bool = False) -> OpenAIBackend:
        from harness.backends.openai_compat import OpenAIBackend

        return OpenAIBackend(
            url, model, api_key_env=self.spec.api_key_env, timeout_s=self.spec.request_timeout_s,
            max_retries=self.spec.max_retries, text_calls=self.spec.text_calls,
            # llama.cpp's chatml formats render no tool turns (see harness.backends.local)
            flatten_tool_turns=local,
        )

    async def open(self, name: str) -> list[Backend]:
        spec = self.spec
        if spec.backend == "vllm":
            from harness.backends.vllm_inproc import VllmInprocBackend

            backend = VllmInprocBackend(_hf_id(name))
            self.stack.push_async_callback(backend.aclose)
            self.served[name] = {"backend": "vllm-inproc", "model_id": await backend.model_id()}
            return [backend]
        urls = list(spec.endpoints)
        served_name = local_model_name(spec.tool_mode) if name == LOCAL else _hf_id(name)
        if not urls:  # serve it ourselves for the length of the run
            from harness.backends.vllm_presets import VllmServer

            server = await self.stack.enter_async_context(LocalServer() if name == LOCAL else VllmServer(name))
            urls = [server.base_url]
        backends: list[Backend] = []
        ids: dict[str, list[str]] = {}
        for url in urls:
            client = self._client(url, served_name, local=name == LOCAL)
            self.stack.push_async_callback(client.aclose)
            ids[url] = await client.served_models()
            if served_name not in ids[url]:
                raise UnknownName(f"model at {url}", served_name, ids[url])
            backends.append(client)
        self.served[name] = {"backend": "openai", "served_name": served_name, "endpoints": urls, "model_ids": ids}
        return backends


def _hf_id(name: str) -> str:
    from harness.backends.vllm_presets import PRESETS

    return PRESETS[name].hf_id if name in PRESETS else name


__all__ = ["ModelPool", "validate_model", "known_models", "HarnessError", "LOCAL"]
