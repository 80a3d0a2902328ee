"""A fake `pynvml` (nvidia-ml-py's module): the GPUs of a machine that is not this one, for the
inventory's tests. `install(monkeypatch, gpus)` puts it where `import pynvml` finds it; each GPU is
(uuid, total GiB, used GiB, name). `fail_init=True` is a machine with the library but no driver."""

from __future__ import annotations

import sys
import types
from typing import Any

GIB = 2**30


class NVMLError(Exception):
    pass


def install(monkeypatch: Any, gpus: list[tuple[str, float, float, str]], fail_init: bool = False) -> types.ModuleType:
    mod = types.ModuleType("pynvml")
    mod.NVMLError = NVMLError  # type: ignore[attr-defined]
    mod.calls = []  # type: ignore[attr-defined]

    def init() -> None:
        mod.calls.append("init")
        if fail_init:
            raise NVMLError("Driver Not Loaded")

    def handle_by_index(i: int) -> int:
        if not 0 <= i < len(gpus):
            raise NVMLError("Invalid Argument")
        return i

    def handle_by_uuid(uuid: str) -> int:
        for i, g in enumerate(gpus):
            if g[0] == uuid:
                return i
        raise NVMLError("Not Found")

    def memory(h: int) -> Any:
        _, total, used, _ = gpus[h]
        return types.SimpleNamespace(total=int(total * GIB), used=int(used * GIB), free=int((total - used) * GIB))

    mod.nvmlInit = init  # type: ignore[attr-defined]
    mod.nvmlShutdown = lambda: mod.calls.append("shutdown")  # type: ignore[attr-defined]
    mod.nvmlDeviceGetCount = lambda: len(gpus)  # type: ignore[attr-defined]
    mod.nvmlDeviceGetHandleByIndex = handle_by_index  # type: ignore[attr-defined]
    mod.nvmlDeviceGetHandleByUUID = handle_by_uuid  # type: ignore[attr-defined]
    mod.nvmlDeviceGetMemoryInfo = memory  # type: ignore[attr-defined]
    mod.nvmlDeviceGetName = lambda h: gpus[h][3].encode()  # type: ignore[attr-defined]
    mod.nvmlDeviceGetUUID = lambda h: gpus[h][0]  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pynvml", mod)
    return mod


def uninstall(monkeypatch: Any) -> None:
    """`import pynvml` fails, as where nvidia-ml-py is not installed."""
    monkeypatch.setitem(sys.modules, "pynvml", None)
