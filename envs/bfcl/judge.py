"""BFCL's own `multi_turn_checker` on an episode's executed calls, the entry unmodified.

The checker replays the calls by `eval` on backend instances it caches in its module's globals,
keyed by model name + entry + class: a second check of the same entry under the same name would
start from the first one's end state. Each check runs under a fresh name, and the instances it
made are dropped afterwards; the backend methods' mutable defaults, which BFCL's calls change,
are put back before each check. The call strings come from `calls.call_string` (identifiers of the
live backend and JSON data only).
"""

from __future__ import annotations

import itertools
import os
import threading
from typing import Any

from envs.bfcl.backends import Backends, restore_defaults
from envs.bfcl.calls import NotACall, call_string
from envs.contract import ToolCall
from envs.limits import bounded

_NAMES = itertools.count()
_LOCK = threading.Lock()  # one check at a time: they share the checker module's globals


# what the checker gets for a call no string can carry safely (a call text BFCL could not evaluate,
# a Python keyword as an argument name): its `eval` fails on it as on the original, with no state
# changed, and the turn still holds a response
UNREADABLE = "unreadable_call_of_the_model()"


def _written(call: dict[str, Any]) -> str:
    """A call as the checker's string (model text never reaches its `eval` as code)."""
    try:
        return call_string(ToolCall(**call))
    except NotACall:
        return UNREADABLE


def judge(
    entry: dict[str, Any], executed: list[list[dict[str, Any]]], backends: Backends | None = None
) -> dict[str, Any]:
    """BFCL's verdict ({"valid": bool, ...}) on the calls executed per turn (`{"name", "arguments"}`
    each). Fewer turns than the entry has is a failure before the checker runs. The checker runs the
    model's calls again (`power(base=9, exponent=999999999)` too): in the episode's sidecar (its
    `backends`'), else in a child of its own, under the limit on external code (envs.limits)."""
    truth = entry["ground_truth"]
    if len(executed) < len(truth):
        return {
            "valid": False,
            "error_type": "multi_turn:turns_not_reached",
            "error_message": f"reached {len(executed)} of {len(truth)} turns",
        }
    decoded = [[[_written(c) for c in turn]] if turn else [] for turn in executed[: len(truth)]]
    category = entry["id"].rsplit("_", 1)[0]
    what = f"BFCL's checker on entry {entry['id']}"
    if backends is not None:
        return backends.sidecar.ask(_checked_there, decoded, truth, entry, category, what=what)
    # imported here, not in the child: each child would import them again
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker, multi_turn_utils  # noqa: F401

    restore_defaults()  # here too: the child copies this process's defaults, and their first copy (a cache)
    return bounded(_checked, decoded, truth, entry, category, what=what)


def _checked_there(_: Backends, *args: Any) -> dict[str, Any]:
    """The checker in the episode's sidecar (its copy of the backends is not what the checker reads)."""
    return _checked(*args)


def _checked(decoded: list[Any], truth: list[Any], entry: dict[str, Any], category: str) -> dict[str, Any]:
    # bfcl-eval: installed apart, with --no-deps (pyproject.toml, the [bfcl] extra)
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_checker as checker
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils as utils

    with _LOCK:
        restore_defaults()  # each check starts from the methods' own defaults, whatever ran before
        name = f"repair_harness_{os.getpid()}_{next(_NAMES)}"
        try:
            verdict = checker.multi_turn_checker(decoded, truth, entry, category, name)
        finally:
            for key in [k for k in vars(utils) if k.startswith(name)]:
                del vars(utils)[key]
    return {k: v for k, v in verdict.items() if k in ("valid", "error_type", "error_message")}
