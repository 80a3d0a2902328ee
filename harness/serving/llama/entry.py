"""Entry point of the embedded llama.cpp server: llama-cpp-python's server, made deterministic.

llama-cpp-python reuses the KV cache of the previous request's longest common prefix. When a
prompt is wholly a prefix of the previous conversation (the next condition's first call after a
full-history episode), it re-evaluates only the last token, alone, and the logits differ from a
full evaluation in the last bits: greedy decoding then answers differently (seen here: the same
992-token prompt gave two different answers depending on the request before it). Resetting the
context before every completion makes each answer a function of its prompt alone, at the cost
of evaluating the whole prompt each time. Same seeds + greedy + the same server = same records.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any, ParamSpec

from llama_cpp import Llama
from llama_cpp.server.__main__ import main
from llama_cpp.server.settings import ConfigFileSettings

from harness.serving.serve_auth import LLAMA_KEY_ENV

P = ParamSpec("P")


def _fresh(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Llama, *args: Any, **kwargs: Any) -> Any:
        self.reset()
        return method(self, *args, **kwargs)

    return wrapper


def _replace(owner: type, name: str, wrap: Callable[[Any], Any]) -> None:
    """Replace a class's method by `wrap` of it: the point of this module. setattr, because mypy
    refuses an assignment to a method where llama_cpp is installed, and sees nothing to refuse
    where it is not (the `[dev]` extra alone), so no one spelling type-checks in both."""
    setattr(owner, name, wrap(getattr(owner, name)))


for _method in ("create_chat_completion", "create_completion"):
    _replace(Llama, _method, _fresh)


def _with_key(load: Callable[P, ConfigFileSettings], key: str) -> Callable[P, ConfigFileSettings]:
    """The key reaches the server's settings from our environment, never from the config file."""

    @functools.wraps(load)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> ConfigFileSettings:
        settings = load(*args, **kwargs)
        settings.api_key = key
        return settings

    return wrapper


if __name__ == "__main__":
    key = os.environ.pop(LLAMA_KEY_ENV, None)
    if key:
        # as above: the settings class's loader is replaced on purpose
        _replace(ConfigFileSettings, "model_validate_json", functools.partial(_with_key, key=key))
    main()
