"""BFCL's prompting decoder, without its `eval`s: the calls a prompting handler reads out of a model's
text (`[cd(folder='document'), ls()]`), as `default_decode_execute_prompting` reads them.

Both a live episode under BFCL's prompting protocol (envs.bfcl.env) and the import of a published
result file (harness.imports.bfcl_format) decode with it, so that what BFCL ran is what runs here.
`NotDecoded`: where BFCL's decoder fails (the turn ends, as in BFCL); `Undecodable`: where it would
evaluate the model's text (arithmetic, a nested call it executes), which is never done here.
"""

from __future__ import annotations

import ast
from typing import Any

from envs.contract import ToolCall


class Undecodable(ValueError):
    """A call BFCL decoded that cannot be read back safely (arguments that are not literals)."""


class NotDecoded(ValueError):
    """What BFCL's prompting decoder raises on a text that is no list of calls: the turn ends."""


def _value(node: ast.AST) -> Any:
    """An argument's value as BFCL's `resolve_ast_by_type` reads it, for the forms that need no
    evaluation (a bare name is its own text: `a=true` reads as 'true')."""
    if isinstance(node, ast.Constant):
        return "..." if node.value is Ellipsis else node.value
    if isinstance(node, ast.UnaryOp):  # BFCL negates any unary operation's constant (`+5` reads -5)
        value = node.operand.value if isinstance(node.operand, ast.Constant) else None
        if not isinstance(value, (int, float)):
            raise NotDecoded(f"no number under a sign: {ast.unparse(node)[:80]!r}")
        return -value
    if isinstance(node, (ast.List, ast.Tuple)):
        items = [_value(v) for v in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values, strict=True) if k is not None}
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Call) and not node.keywords:  # BFCL keeps such a call as its text
        return ast.unparse(node)
    if isinstance(node, ast.Call):  # BFCL's {name: arguments}, a nested call
        return {ast.unparse(node.func): {k.arg: _value(k.value) for k in node.keywords if k.arg is not None}}
    names = [n.id for n in ast.walk(node) if isinstance(n, ast.Name)]
    if isinstance(node, (ast.BinOp, ast.Lambda)) and names:
        raise NotDecoded(f"name {names[0]!r} is not defined")  # BFCL's decoder `eval`s it and fails
    if isinstance(node, (ast.BinOp, ast.Lambda, ast.Subscript)):
        raise Undecodable(f"an argument BFCL's decoder would compute: {ast.unparse(node)[:80]!r}")
    raise NotDecoded(f"Unsupported AST type: {type(node)}")  # BFCL's decoder fails: the turn ends


def _argument(node: ast.AST) -> Any:
    """An argument as BFCL writes it for execution (`parse_nested_value`): a dict of dicts is a
    nested call it would execute (refused: never run here), an empty dict fails its decoding."""
    value = _value(node)
    if isinstance(value, dict) and not value:
        raise NotDecoded("an empty dict, which BFCL's writer cannot read as a nested call")
    if isinstance(value, dict) and all(isinstance(v, dict) for v in value.values()):
        raise Undecodable(f"a nested call BFCL would execute: {ast.unparse(node)[:80]!r}")
    return value


def prompting_calls(raw: str) -> list[ToolCall]:
    """BFCL's `default_decode_execute_prompting` without its `eval`s: backticks and blanks
    stripped, brackets completed, each call's keyword arguments (positional ones are dropped, as
    BFCL drops them). `NotDecoded` where BFCL's decoding fails, or would evaluate an argument."""
    text = raw.strip("`\n ")
    text = ("" if text.startswith("[") else "[") + text + ("" if text.endswith("]") else "]")
    try:
        tree = ast.parse(text.strip().strip("'"), mode="eval").body
    except SyntaxError as exc:
        raise NotDecoded(str(exc)) from None
    items = [tree] if isinstance(tree, ast.Call) else getattr(tree, "elts", None)
    if items is None or not all(isinstance(i, ast.Call) for i in items):
        raise NotDecoded("not a list of calls")
    out = []
    for item in items:
        assert isinstance(item, ast.Call)
        out.append(
            ToolCall(
                name=ast.unparse(item.func),
                arguments={k.arg: _argument(k.value) for k in item.keywords if k.arg is not None},
            )
        )
    return out


def _written(value: Any) -> str:
    """A value as BFCL's `parse_nested_value` writes it into the call's text: a dict of dicts is a
    nested call it would execute (refused, as `_argument` refuses one at the top), an empty one
    fails its writer (the turn ends), any other dict is written key by key, the rest with `repr`."""
    if not isinstance(value, dict):
        return repr(value)
    if not value:
        raise NotDecoded("an empty dict, which BFCL's writer cannot read as a nested call")
    if all(isinstance(v, dict) for v in value.values()):
        raise Undecodable(f"a nested call BFCL would execute: {next(iter(value))!r}")
    return "{" + ", ".join(f"'{k}': {_written(v)}" for k, v in value.items()) + "}"


def call_text(call: ToolCall) -> str:
    """The call as BFCL's decoder hands it on (`decoded_output_to_execution_list`): the text its
    prompting handler names each execution result by, `cd(folder='document')`."""
    return f"{call.name}({', '.join(f'{k}={_written(v)}' for k, v in call.arguments.items())})"
