"""BFCL's multi-turn result files, read: one JSON line per entry, per turn a list of steps.

What a step holds depends on the model's handler: a list of `{name: "<JSON arguments>"}` (function
calling: gpt-oss, DeepSeek), a string of JSON (`[{"name", "arguments"}]` from xLAM, `{"name",
"parameters"}` from Llama's), Python call text (prompting handlers), a plain text answer, or an empty
list. What BFCL executed is in the entry's `inference_log`: per step, the `handler_log` with its
`model_response_decoded` (call strings such as `cd(folder='document')`) or the decoding error
that ended the turn, and one `tool` message per executed call, the text the model was shown. That
decoding is read first; a step without a log is decoded here from its raw form, as BFCL's handlers
decode it (JSON calls, whole or separated by `;` as Llama 3.1's and xLAM's handlers split them, or a
Python literal where Llama 3.1's handler `eval`s the text; else its prompting decoder: brackets
completed, keyword arguments only, a bare name read as its text). Call text is read with `ast`
(literals only, never `eval`): a call whose arguments are not literals is kept whole, to be answered
with the error BFCL's `eval` met on it (`envs.bfcl.calls.eval_error`); one whose error cannot be
told without evaluating it, or JSON calls whose arguments `eval` computed, is refused.

A turn is the result's own list of steps. BFCL ends a turn only at a step that decodes to no call
(or at its force-quit); files written by other pipelines keep only the steps with calls (an empty
turn is `[]`), so a turn whose last step has calls, short of the force-quit, gets its closing
answer back as a step with no text, no call and no known cost (`Step.closing`).
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from typing import Any

from envs.bfcl.calls import eval_error
from envs.bfcl.data import STEP_LIMIT
from envs.bfcl.decode import NotDecoded, Undecodable, prompting_calls
from envs.contract import ToolCall
from envs.errors import UserError
from harness.imports.inputs import text_lines

NAME = re.compile(r"^BFCL_(v\d+)_multi_turn_(base|miss_param|miss_func|long_context)_(result|score)\.json$")
ANY_BFCL = re.compile(r"^BFCL_v\d+_\w+_(result|score)\.json$")


class NotBfcl(UserError):
    """A file that is not a BFCL multi-turn result file."""


@dataclass(frozen=True)
class Step:
    """One model call of the recorded entry: the calls BFCL decoded from it (none: an answer in
    text, which ends the turn), its raw text, what each executed call returned, its cost."""

    calls: list[ToolCall]
    text: str
    said: list[str]
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float
    decode_error: str | None = None
    closing: bool = False  # not in the file: the turn's closing answer, which its pipeline left out


@dataclass
class Entry:
    """One entry of a result file: its id, the line, its turns of steps (or why it has none)."""

    id: str
    line: int
    turns: list[list[Step]] = field(default_factory=list)
    queries: list[list[str] | None] = field(default_factory=list)  # each turn's first user message(s)
    # the backends' state BFCL logged before the first turn, by class (None: not logged)
    initial: dict[str, Any] | None = None
    handler_error: str | None = None  # BFCL's own inference failed (a server or handler error)
    logged: bool = False  # the entry has an inference_log: what BFCL told the model is known
    # steps whose raw form is a handler's of each kind (`style`): which of BFCL's handlers played it
    styles: dict[str, int] = field(default_factory=dict)


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _at(table: Any, t: int, s: int) -> Any:
    try:
        return table[t][s]
    except (IndexError, KeyError, TypeError):
        return None


def _args(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        value = json.loads(value) if value.strip() else {}
    if not isinstance(value, dict):
        raise Undecodable(f"arguments are not an object: {str(value)[:80]!r}")
    return value


_ODD_NAME = re.compile(r"^\s*([^(]+?)\s*(\(.*\))\s*$", re.DOTALL)


def call_of_text(text: str, method: Callable[[str], Any] | None) -> ToolCall:
    """`name(a, k=v)` as a call; positional arguments named from the backend's signature. A name
    that is no Python name (`cat<|channel|>`: a model's stray tokens, which BFCL decodes as they
    are and its `eval` then fails on) is kept as it is, its arguments read the same way; a call
    whose arguments are not even Python (`pwd(='')`) is kept whole as its name, with none."""
    try:
        node = ast.parse(text.strip(), mode="eval").body
        name = node.func.id if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) else None
    except SyntaxError:
        odd = _ODD_NAME.match(text)
        if odd is None:
            raise Undecodable(f"not a call: {text[:80]!r}") from None
        try:
            node = ast.parse(f"f{odd.group(2)}", mode="eval").body
        except SyntaxError:  # `pwd(='')`: no call BFCL could run; kept whole, as the name it failed on
            return ToolCall(name=text.strip(), arguments={})
        name = odd.group(1)
    if name is None or not isinstance(node, ast.Call):
        raise Undecodable(f"not a call: {text[:80]!r}")
    try:
        args: dict[str, Any] = {}
        for k in node.keywords:  # `**{'folder': 'x'}` (k.arg None): BFCL's eval runs it as folder='x'
            more = {k.arg: ast.literal_eval(k.value)} if k.arg is not None else ast.literal_eval(k.value)
            if not isinstance(more, dict) or not all(isinstance(n, str) for n in more) or args.keys() & more.keys():
                raise ValueError("keywords BFCL's eval would refuse")  # read as arguments not literals
            args.update(more)
        values = [ast.literal_eval(a) for a in node.args]
    except ValueError:
        if eval_error(text) is None:
            raise Undecodable(f"arguments that are not literals: {text[:80]!r}") from None
        return ToolCall(name=text.strip(), arguments={})  # answered with BFCL's error, never evaluated
    if values:
        target = method(name) if method is not None and name.isidentifier() else None
        if target is None:
            raise Undecodable(f"positional arguments to an unknown function: {text[:80]!r}")
        params = [
            p.name
            for p in inspect.signature(target).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.name != "self"
        ]
        if len(values) > len(params):
            raise Undecodable(f"more positional arguments than {name} takes: {text[:80]!r}")
        args = {**dict(zip(params, values, strict=False)), **args}
    return ToolCall(name=name, arguments=args)


def _literal(node: ast.AST) -> Any:
    """A literal, or literal dicts joined by `|` (`{...} | {...}`: Python's `eval` merges them, the
    last one's keys winning, and Llama 3.1's handler runs the merged call)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _literal(node.left), _literal(node.right)
        if isinstance(left, dict) and isinstance(right, dict):
            return {**left, **right}
        raise ValueError("| of other than dicts")
    return ast.literal_eval(node)


def _json_text(raw: str) -> Any:
    """A step's text as the handlers that have the model write JSON read it: the whole of it, else
    calls separated by `;` (Llama 3.1's and xLAM's `split(";")`, each part `json.loads`ed), else a
    Python literal (Llama 3.1's `eval`, here `literal_eval`: `"a" 'b'` is one string). ValueError:
    none of these (a prompting handler's call text, or an answer)."""
    text = raw.removeprefix("<|python_tag|>")  # Llama 3.1's handler drops its tag first
    try:
        return json.loads(text)
    except ValueError:
        pass
    if ";" in text:
        try:
            return [json.loads(part) for part in text.split(";")]
        except ValueError:
            pass
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        raise ValueError("no JSON calls") from None
    try:
        value = _literal(tree)
    except (ValueError, TypeError, MemoryError, RecursionError):
        top = (
            tree.elts if isinstance(tree, ast.List) else list(ast.walk(tree)) if isinstance(tree, ast.BinOp) else [tree]
        )
        if any(isinstance(n, ast.Dict) for n in top):
            # `{"content": "round(" + str(6000.0) + ")"}`: what Llama 3.1's `eval` computed, never here
            raise Undecodable(f"a call BFCL's decoder would compute: {text[:80]!r}") from None
        raise ValueError("no JSON calls") from None
    calls = [value] if isinstance(value, dict) else value if isinstance(value, list) else []
    if not calls or not all(isinstance(i, dict) and "name" in i for i in calls):
        raise ValueError("no JSON calls")  # Llama's handler reads `name` of each: `['x']`, `3`, `{'a': 1}` fail
    return value


def _raw_calls(raw: Any, method: Callable[[str], Any] | None) -> list[ToolCall] | None:
    """The calls of a step with no decoding logged, from its raw form; None: text (BFCL's decoder
    found no call in it, which ends the turn)."""
    if isinstance(raw, str):
        try:
            raw = _json_text(raw)
        except Undecodable:
            raise
        except ValueError:
            try:
                return prompting_calls(raw) or None
            except NotDecoded:
                return None
    raw = [raw] if isinstance(raw, dict) else raw
    if not isinstance(raw, list) or not raw or not all(isinstance(i, dict) for i in raw):
        return None
    out = []
    for item in raw:
        if "name" in item and ("arguments" in item or "parameters" in item):
            out.append(ToolCall(name=str(item["name"]), arguments=_args(item.get("arguments", item.get("parameters")))))
        elif len(item) == 1:
            name, value = next(iter(item.items()))
            out.append(ToolCall(name=str(name), arguments=_args(value)))
        else:  # `{"engineState": ...}`: every handler's decoder fails on it (KeyError), the turn ends
            return None
    return out


def style(raw: Any) -> str | None:
    """Which kind of BFCL handler wrote a step: `FC` (native calls, `[{name: "<JSON>"}]`, or the
    JSON that a function-calling model's own template has it write: Llama 3.1's, xLAM's), `prompting`
    (Python call text, as BFCL's prompting system prompt asks), None (an answer in text, no call)."""
    if isinstance(raw, (list, dict)):
        return "FC" if raw else None
    if not isinstance(raw, str):
        return None
    try:
        value = _json_text(raw)
    except Undecodable:  # JSON calls all the same, with arguments `eval` computed
        return "FC"
    except ValueError:
        value = None
    if isinstance(value, dict) or (isinstance(value, list) and value and all(isinstance(i, dict) for i in value)):
        return "FC"
    try:
        return "prompting" if prompting_calls(raw) else None
    except (NotDecoded, Undecodable):
        return None


def handler(styles: dict[str, int]) -> str | None:
    """The kind of BFCL handler that played a file's entries, from their steps' `Entry.styles`
    summed: the kind most steps with calls were written in; None: no step has one."""
    counts = {kind: styles.get(kind, 0) for kind in ("FC", "prompting")}
    return max(counts, key=lambda k: counts[k]) if any(counts.values()) else None


def _step(raw: Any, log: list[Any] | None, cost: tuple[Any, Any, Any], method: Callable[[str], Any] | None) -> Step:
    text = raw if isinstance(raw, str) else ""
    said: list[str] = []
    calls: list[ToolCall] | None = None
    error = None
    if log:
        said = [str(m.get("content")) for m in log if isinstance(m, dict) and m.get("role") == "tool"]
        handler = next((m for m in log if isinstance(m, dict) and m.get("role") == "handler_log"), None)
        if handler is not None and "model_response_decoded" in handler:
            decoded = handler["model_response_decoded"]
            strings = [d for d in decoded if isinstance(d, str) and d.strip()] if isinstance(decoded, list) else []
            calls = [call_of_text(d, method) for d in strings]
        elif handler is not None:
            calls, error = [], str(handler.get("error") or handler.get("content") or "not decoded")
    if calls is None:
        calls = _raw_calls(raw, method) or []
    for i, c in enumerate(calls):
        c.id = f"call_{i}"
    prompt, completion, latency = cost
    return Step(calls, text, said, _int(prompt), _int(completion), float(latency or 0.0), error)


def read_entry(line: str, number: int, method: Callable[[str], Any] | None) -> Entry:
    """One line of a result file; `NotBfcl` when it is not an entry of one."""
    try:
        data = json.loads(line)
    except ValueError as exc:
        raise NotBfcl(f"line {number} is not JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str) or "result" not in data:
        raise NotBfcl(f'line {number} has no "id" and "result": not an entry of a BFCL result file')
    entry = Entry(id=data["id"], line=number)
    result = data["result"]
    if not isinstance(result, list):
        entry.handler_error = str(result)[:500]
        return entry
    log = data.get("inference_log") or []
    entry.logged = isinstance(log, list) and any(isinstance(t, dict) for t in log)
    if log and isinstance(log[0], list):
        entry.initial = {
            str(s.get("class_name")): s.get("content")
            for s in log[0]
            if isinstance(s, dict) and s.get("role") == "state_info"
        }
    logs = [t for t in log if isinstance(t, dict)]
    for t, turn in enumerate(result):
        log = logs[t] if t < len(logs) else {}
        entry.queries.append(_asked(log.get("begin_of_turn_query")))
        steps = [
            _step(
                raw,
                log.get(f"step_{s}"),
                tuple(_at(data.get(k), t, s) for k in ("input_token_count", "output_token_count", "latency")),
                method,
            )
            for s, raw in enumerate(turn if isinstance(turn, list) else [turn])
        ]
        for raw in turn if isinstance(turn, list) else [turn]:
            if (kind := style(raw)) is not None:
                entry.styles[kind] = entry.styles.get(kind, 0) + 1
        forced = sum(1 for step in steps if step.calls) > STEP_LIMIT
        if (not steps or steps[-1].calls) and not forced:
            steps.append(Step([], "", [], None, None, 0.0, closing=True))
        entry.turns.append(steps)
    return entry


def _text(content: Any) -> str:
    """A message's content as text: a string, or content blocks (`[{"type": "text", "text": ...}]`,
    the Anthropic handler's) joined."""
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text")
    return str(content)


def _asked(query: Any) -> list[str] | None:
    """A turn's user messages as BFCL logged them, without the system prompt a prompting handler
    puts before the first (its function docs: not the entry's question)."""
    if isinstance(query, str):
        return [query]
    asked = [_text(m.get("content")) for m in query or [] if isinstance(m, dict) and m.get("role", "user") != "system"]
    return asked or None


def published(path: Any) -> dict[str, dict[str, Any]]:
    """A score file's verdicts: the failed entries by id (BFCL lists only those, after a summary
    line); an id absent from it passed."""
    failed: dict[str, dict[str, Any]] = {}
    # opened as what it claims (harness.imports.inputs): a FIFO, UTF-16, a 0xFF byte are one line
    with closing(text_lines(path)) as lines:
        for number, line in lines:
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except (ValueError, RecursionError):
                raise NotBfcl(f"{path}: line {number} is not JSON (or nested deeper than can be read)") from None
            if isinstance(row, dict) and isinstance(row.get("id"), str):
                error = row.get("error")
                kind = error.get("error_type") if isinstance(error, dict) else None
                failed[row["id"]] = {"error_type": kind, "valid": bool(row.get("valid", False))}
    return failed
