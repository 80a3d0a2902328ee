"""Calls as BFCL writes them (`cd(folder='x')`) and as we hold them (a name and keyword arguments).

Ground truth strings are read with `ast` (literals only, never `eval`); positional arguments get
their names from the backend method's `inspect.signature` (the docs' order differs, e.g.
`purchase_insurance`). The other way, a call string for BFCL's checker (which `eval`s it) is built
only from a name and keywords that are Python identifiers of the live backend, and values that are
JSON data written with `repr`: model text never reaches the checker as code.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import keyword
import re
from collections.abc import Callable
from typing import Any

from envs.contract import ToolCall


class NotACall(ValueError):
    pass


def parse(text: str, method: Callable[[str], Callable[..., Any]]) -> ToolCall:
    """`name(a, k=v)` -> ToolCall(name, {param: value}); `method(name)` is the backend's method
    (bound, or the class's function: `self` is skipped)."""
    node = ast.parse(text.strip(), mode="eval").body
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        raise NotACall(f"not a call: {text!r}")
    name = node.func.id
    params = [
        p
        for p in inspect.signature(method(name)).parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"
    ]
    args = {params[i].name: ast.literal_eval(a) for i, a in enumerate(node.args)}
    args.update({k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None})
    return ToolCall(name=name, arguments=args)


def identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


def is_data(value: Any) -> bool:
    """JSON data: what `repr` writes as a Python literal that reads back as the same value."""
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return value == value and value not in (float("inf"), float("-inf"))
    if isinstance(value, list):
        return all(is_data(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and is_data(v) for k, v in value.items())
    return False


def call_string(call: ToolCall) -> str:
    """The string BFCL's checker evaluates; refuses anything but identifiers and JSON data."""
    if not identifier(call.name) or not all(identifier(k) for k in call.arguments):
        raise NotACall(f"not an identifier in {call.name!r}({', '.join(call.arguments)})")
    if not is_data(call.arguments):
        raise NotACall(f"arguments of {call.name!r} are not JSON data")
    return f"{call.name}({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})"


# names `execute_multi_turn_func_call` refuses to evaluate, whatever they are
BLOCKED = frozenset({"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"})


def eval_error(text: str) -> str | None:
    """The error BFCL's `eval` meets on a call text that is not a name and literals, found without
    evaluating anything: its SyntaxError, or the NameError of the first name it would look up that
    is no builtin (`ls(a=true)`: "name 'true' is not defined"). None: no such error can be told
    (the text would compute something), so it cannot be answered as BFCL answered it."""
    try:  # named as `eval` names its source, which its message quotes
        node = ast.parse(text.strip(), filename="<string>", mode="eval").body
    except SyntaxError as exc:
        return str(exc)
    if not isinstance(node, ast.Call):
        return None
    # Python evaluates the callee, the positional arguments, then the keywords' values, in order
    for part in [*node.args, *(k.value for k in node.keywords)]:
        for sub in ast.walk(part):
            if isinstance(sub, ast.Name) and not hasattr(builtins, sub.id):
                return f"name {sub.id!r} is not defined"
    return None


# `_process_method_calls`: every name before a "(" in a call's text, inside its string literals too
_BEFORE_PAREN = re.compile(r"\b([a-zA-Z_]\w*)\s*(?=\()")


def as_bfcl_ran(call: ToolCall, instances: dict[str, str]) -> ToolCall | None:
    """The call BFCL's `execute_multi_turn_func_call` ran: it writes the call as text (each value's
    `repr`), and before its `eval` joins every name to the "(" after it and prefixes a backend
    method's name with its instance's (`instances`: method -> instance name), in string literals
    as much as in the code (`'Medium (2 weeks)'` becomes `'Medium(2 weeks)'`). The text is read back
    with `ast` (literals only). None: arguments that are no JSON data, or a text that no longer reads
    back (the call is then run as it came)."""
    if not is_data(call.arguments):
        return None
    text = f"_({', '.join(f'{k}={v!r}' for k, v in call.arguments.items())})"  # `_`: no method's name
    done = _BEFORE_PAREN.sub(lambda m: f"{instances[m[1]]}.{m[1]}" if m[1] in instances else m[1], text)
    if done == text:
        return call
    try:
        node = ast.parse(done, mode="eval").body
        assert isinstance(node, ast.Call)
        arguments = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg is not None}
    except (SyntaxError, ValueError, AssertionError):
        return None
    return call.model_copy(update={"arguments": arguments})


# the releases from which BFCL's `execute_multi_turn_func_call` names a backend instance otherwise
# (read in each release's eval_checker/multi_turn_eval/multi_turn_utils.py): before 2025.8.25,
# the model's `-./` made `_` and the class lowercased; from it, the class as it is and `-./` made
# `_` in the whole name; from 2026.3.3, `:` too
_CLASS_AS_IS = (2025, 8, 25)
_COLON_TOO = (2026, 3, 3)


def instance_name(release: str, model: str, entry_id: str, cls: str) -> str:
    """The name BFCL's execution gives an entry's backend instance on `release` (a dated
    bfcl-eval version), which its call text writes into string literals (`as_bfcl_ran`)."""
    try:
        when = tuple(int(part) for part in release.split("."))
    except ValueError:  # an undated release ("unknown"): the installed one's rule, the newest
        when = _COLON_TOO
    if when < _CLASS_AS_IS:
        return f"{re.sub(r'[-./]', '_', model)}_{entry_id}_{cls.lower()}_instance"
    return re.sub(r"[-./:]" if when >= _COLON_TOO else r"[-./]", "_", f"{model}_{entry_id}_{cls}_instance")
