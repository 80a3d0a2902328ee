"""An episode's own instances of BFCL's backend classes, and a call executed on them.

They are built as BFCL's `execute_multi_turn_func_call` builds them (`_load_scenario` on a deep
copy of the entry's config, `long_context` for that category) but held by the episode, not in the
module globals BFCL caches them in. A result reads as BFCL shows it to a model: a string as it is,
a dict as JSON, anything else `str`; an exception as `Error during execution: ...`, one raised
while the result is written as text too (BFCL converts inside its `try`).
"""

from __future__ import annotations

import copy
import functools
import importlib
import inspect
import json
import keyword
from typing import Any

from envs.bfcl.calls import BLOCKED, eval_error
from envs.bfcl.data import CLASSES
from envs.contract import ToolCall
from envs.limits import Sidecar

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


@functools.cache
def _pristine() -> tuple[tuple[Any, Any, Any], ...]:
    """Every backend method's default values as first imported. Some are mutable and mutated
    (`post_tweet(mentions=[])`, then `mention` extends the tweet's list: the default itself), so
    one episode's or one check's calls would change what the next one starts from."""
    out = []
    for cls in CLASSES:
        for fn in vars(backend_class(cls)).values():
            # only those with a default a call can change: a tuple of immutable values is its own
            # deep copy, and no call can change it (restoring it was 90% of restore_defaults' time)
            if inspect.isfunction(fn) and (
                copy.deepcopy(fn.__defaults__) is not fn.__defaults__ or fn.__kwdefaults__ is not None
            ):
                out.append((fn, copy.deepcopy(fn.__defaults__), copy.deepcopy(fn.__kwdefaults__)))
    return tuple(out)


def restore_defaults() -> None:
    """Put back every backend method's default values (before BFCL's checker runs its calls)."""
    for fn, defaults, kwdefaults in _pristine():
        fn.__defaults__ = copy.deepcopy(defaults)
        fn.__kwdefaults__ = copy.deepcopy(kwdefaults)


@functools.cache
def _mutable_defaults(fn: Any) -> bool:
    """Whether a function has a parameter whose default is a list, dict or set (its type stays:
    restore_defaults puts back copies of the first ones)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return any(isinstance(p.default, (list, dict, set)) for p in params.values())


def _with_defaults(method: Any, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with each mutable default given explicitly, as a copy: the episode's call
    never holds, and so never changes, the method's own default."""
    fn = getattr(method, "__func__", None)
    if inspect.isfunction(fn) and not _mutable_defaults(fn):  # most methods: no signature to read per call
        return dict(arguments)
    try:
        params = inspect.signature(method).parameters
    except (TypeError, ValueError):
        return arguments
    out = dict(arguments)
    for name, p in params.items():
        if name not in out and isinstance(p.default, (list, dict, set)):
            out[name] = copy.deepcopy(p.default)
    return out


class Backends:
    def __init__(self, classes: list[str], config: dict[str, Any], long_context: bool, sidecar: bool = True):
        self.instances: dict[str, Any] = {}
        self.methods: dict[str, tuple[str, Any]] = {}  # name -> (class, bound method); the last class wins, as in BFCL
        for cls in classes:
            instance = backend_class(cls)()
            if cls not in STATELESS:
                instance._load_scenario(copy.deepcopy(config.get(cls, {})), long_context=long_context)
            self.instances[cls] = instance
            for name, method in _public_methods(instance):
                self.methods[name] = (cls, method)
        # BFCL's code on a model's arguments may never return (a big-int `power`): a child with a
        # copy of these backends runs every call first, in the same order, under the limit on
        # external code (envs.limits), and the checker too. The child is kept for the next
        # episode, which builds its copy there from the same data (`sidecar=False`: backends that
        # are only read, never called, need none)
        self.sidecar = Sidecar(self, build=(_built, (classes, config, long_context)), fork=sidecar)

    def close(self) -> None:
        self.sidecar.close()

    def method(self, name: str) -> Any:
        return self.methods[name][1]

    def says(self, call: ToolCall) -> tuple[str, bool]:
        """What BFCL's own execution would show for a call our checks refuse to run, and whether
        that is an error: BFCL runs every decoded call, so the call runs here on a copy of its
        backend (the episode's state is untouched); an unknown name is the `NameError` its
        `eval` meets."""
        if "(" in call.name:  # a whole call text whose arguments are not literals (calls.eval_error)
            said = eval_error(call.name)
            if said is not None:
                return f"{ERROR_PREFIX}{said}", True
        unreadable = self.unreadable(call)
        if unreadable is not None:
            return unreadable, True
        if not call.name.isidentifier():  # a model's stray tokens in the name: BFCL's `eval` cannot read it
            try:
                compile(f"{call.name}()", "<string>", "eval")
            except SyntaxError as exc:
                return f"{ERROR_PREFIX}{exc}", True
        if call.name in BLOCKED:
            return f"{ERROR_PREFIX}Function call {call.name} is not allowed.", True
        if call.name not in self.methods:
            return f"{ERROR_PREFIX}name {call.name!r} is not defined", True
        # on a copy of its backend, in the sidecar: the episode's state is untouched
        return self.sidecar.ask(_said_there, call, what=_named(call))

    def _said(self, call: ToolCall) -> tuple[str, bool]:
        spare = copy.deepcopy(self.instances[self.methods[call.name][0]])
        try:
            method = getattr(spare, call.name)
            result = method(**_with_defaults(method, copy.deepcopy(call.arguments)))
            shown = _shown(result)  # inside: BFCL's own conversion is inside its `try` (a 5,000-digit int)
        except MemoryError:  # the limit on external code's memory (envs.limits), never the model's text
            raise
        except Exception as exc:  # BFCL turns every exception into text for the model
            return f"{ERROR_PREFIX}{exc}", True
        return shown, isinstance(result, dict) and "error" in result

    @staticmethod
    def unreadable(call: ToolCall) -> str | None:
        """BFCL's text for a call whose argument names its `eval` cannot read (`from=...`, a
        Python keyword: a SyntaxError); None for any other call."""
        if all(k.isidentifier() and not keyword.iskeyword(k) for k in call.arguments):
            return None
        text = f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})"
        said = eval_error(text)
        return None if said is None else f"{ERROR_PREFIX}{said}"

    def run(self, call: ToolCall) -> tuple[str, Any, BaseException | None]:
        """The text BFCL shows, the result as returned, and the exception (None when it returned).
        The call runs first in the sidecar, where a limit can stop it, then here once it returned
        in time."""
        self.sidecar.ask(_ran_there, call, what=_named(call))
        return self._ran(call)

    def _ran(self, call: ToolCall) -> tuple[str, Any, BaseException | None]:
        try:
            method = self.method(call.name)
            result = method(**_with_defaults(method, call.arguments))
            # inside the `try`, as in BFCL's executor: a result Python will not write as text (an
            # integer over 4,300 digits, `power(base=10, exponent=5000)`) is BFCL's error text too
            shown = _shown(result)
        except MemoryError:  # the limit on external code's memory (envs.limits), never the model's text
            raise
        except Exception as exc:  # BFCL turns every exception into text for the model
            return f"{ERROR_PREFIX}{exc}", None, exc
        return shown, result, None


_METHOD_NAMES: dict[type, tuple[str, ...]] = {}


def _method_names(klass: type) -> tuple[str, ...]:
    """The names `inspect.getmembers(instance, inspect.ismethod)` finds public on an instance of a
    class whose instances hold no attribute of a method's name, in its order (sorted)."""
    if klass not in _METHOD_NAMES:
        fresh = klass()
        _METHOD_NAMES[klass] = tuple(
            n for n in dir(klass) if not n.startswith("_") and inspect.ismethod(getattr(fresh, n, None))
        )
    return _METHOD_NAMES[klass]


def _public_methods(instance: Any) -> list[tuple[str, Any]]:
    """An instance's public bound methods, by name, as `inspect.getmembers(..., ismethod)` lists
    them (which reads every attribute of the instance: 1 ms a backend); the class's names bound,
    unless one of the instance's own attributes is a method or shadows one (then getmembers' own)."""
    names = _method_names(type(instance))
    own = vars(instance)
    if any(n in own for n in names) or any(inspect.ismethod(v) for v in own.values()):
        return [(n, m) for n, m in inspect.getmembers(instance, predicate=inspect.ismethod) if not n.startswith("_")]
    return [(n, getattr(instance, n)) for n in names]


def _built(classes: list[str], config: dict[str, Any], long_context: bool) -> Backends:
    """An episode's backends in a kept sidecar: built as the episode's own were, from the same data."""
    return Backends(classes, config, long_context, sidecar=False)


def _ran_there(backends: Backends, call: ToolCall) -> None:
    """The sidecar's run of a call: its copy of the state changes as this one will; the result stays there."""
    backends._ran(call)


def _said_there(backends: Backends, call: ToolCall) -> tuple[str, bool]:
    return backends._said(call)


def _named(call: ToolCall) -> str:
    """A call as a harness error names it (its arguments cut: they are a model's)."""
    arguments = ", ".join(f"{k}={v!r:.60}" for k, v in call.arguments.items())
    return f"BFCL's backend call {call.name}({arguments:.200})"


def _shown(result: Any) -> str:
    """A result as BFCL's `execute_multi_turn_func_call` writes it for the model."""
    if isinstance(result, str):
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except (TypeError, ValueError):
            return str(result)
    return str(result)
