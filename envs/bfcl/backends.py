"""An episode's own instances of BFCL's backend classes, and a call executed on them.

They are built as BFCL's `execute_multi_turn_func_call` builds them (`_load_scenario` on a deep
copy of the entry's config, `long_context` for that category) but held by the episode, not in the
module globals BFCL caches them in. A result reads as BFCL shows it to a model: a string as it is,
a dict as JSON, anything else `str`; an exception as `Error during execution: ...`.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import json
from typing import Any

from envs.bfcl.data import CLASSES
from envs.contract import ToolCall

STATELESS = frozenset({"MathAPI"})
ERROR_PREFIX = "Error during execution: "


def backend_class(cls: str) -> type:
    klass: type = getattr(
        importlib.import_module(f"bfcl_eval.eval_checker.multi_turn_eval.func_source_code.{CLASSES[cls]}"), cls
    )
    return klass


def functions(classes: list[str]) -> dict[str, Any]:
    """The public methods of the classes, unbound, by name; the last class wins, as in BFCL. What
    `calls.parse` reads a signature from, with no backend built."""
    out: dict[str, Any] = {}
    for cls in classes:
        klass = backend_class(cls)
        out.update({n: getattr(klass, n) for n in dir(klass) if not n.startswith("_") and callable(getattr(klass, n))})
    return out


class Backends:
    def __init__(self, classes: list[str], config: dict[str, Any], long_context: bool):
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, tuple[str, Any]] = {}  # name -> (class, bound method); the last class wins, as in BFCL
        for cls in classes:
            instance = backend_class(cls)()
            if cls not in STATELESS:
                instance._load_scenario(copy.deepcopy(config.get(cls, {})), long_context=long_context)
            self.instances[cls] = instance
            for name, method in inspect.getmembers(instance, predicate=inspect.ismethod):
                if not name.startswith("_"):
                    self.methods[name] = (cls, method)

    def method(self, name: str) -> Any:
        return self.methods[name][1]

    def run(self, call: ToolCall) -> tuple[str, Any, BaseException | None]:
        """The text BFCL shows, the result as returned, and the exception (None when it returned)."""
        try:
            result = self.method(call.name)(**call.arguments)
        except Exception as exc:  # BFCL turns every exception into text for the model
            return f"{ERROR_PREFIX}{exc}", None, exc
        if isinstance(result, str):
            return result, result, None
        if type(result) is dict:
            try:
                return json.dumps(result), result, None
            except (TypeError, ValueError):
                return str(result), result, None
        return str(result), result, None
