"""A backend's error, after the call ran, as a Violation the conditions can render.

`message` and `raw` are the backend's own text, so `raw` is exactly what BFCL shows a model; the
location is the argument whose value the text quotes (else the only argument); the allowed values
come from the live state where the backend has them (the current folder's entries, the known
symbols, order, user and ticket ids, the airports), never from credentials. The call was executed:
it stays in what the checker replays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from envs.contract import ToolCall, Violation

_FILES = ("file_name", "file_name1", "file_name2", "source", "dir_name", "name")


def _entries(fs: Any, dirs_only: bool = False) -> list[str]:
    here = getattr(fs, "_current_dir", None)
    contents = getattr(here, "contents", {}) or {}
    names = [n for n, v in contents.items() if not dirs_only or hasattr(v, "contents")]
    return sorted(names) + ([".."] if dirs_only and getattr(here, "parent", None) is not None else [])


def _tickets(api: Any) -> list[str]:
    return [str(t["id"]) for t in getattr(api, "ticket_queue", []) if isinstance(t, dict) and "id" in t]


# (class, argument) -> the live values a correct call could carry
LIVE: dict[tuple[str, str], Callable[[Any], list[str]]] = {
    ("GorillaFileSystem", "folder"): lambda fs: _entries(fs, dirs_only=True),
    ("GorillaFileSystem", "path"): lambda fs: _entries(fs, dirs_only=True),
    **{("GorillaFileSystem", a): _entries for a in _FILES},
    ("TradingBot", "symbol"): lambda bot: sorted(getattr(bot, "stocks", {})),
    ("TradingBot", "order_id"): lambda bot: sorted(str(k) for k in getattr(bot, "orders", {})),
    ("MessageAPI", "user_id"): lambda m: sorted(getattr(m, "user_map", {}).values()),
    ("MessageAPI", "receiver_id"): lambda m: sorted(getattr(m, "user_map", {}).values()),
    ("MessageAPI", "user"): lambda m: sorted(getattr(m, "user_map", {})),
    ("TicketAPI", "ticket_id"): _tickets,
    **{("TravelAPI", a): lambda t: sorted(t.list_all_airports()) for a in ("travel_from", "travel_to")},
}


def failed(result: Any, exc: BaseException | None) -> bool:
    """Whether the call failed: an exception, or a dict with an `error` key."""
    return exc is not None or (isinstance(result, dict) and "error" in result)


def quoted(call: ToolCall, text: str, cls: str, instance: Any) -> str | None:
    """The argument the text quotes; of several (`diff: a or b: No such file`), the one whose value
    the live state does not hold."""
    values = [(k, str(v)) for k, v in call.arguments.items() if isinstance(v, (str, int, float)) and str(v)]
    hits = [k for k, v in sorted(values, key=lambda kv: -len(kv[1])) if v in text]
    unknown = [k for k in hits if (cls, k) in LIVE and str(call.arguments[k]) not in LIVE[(cls, k)](instance)]
    if hits:
        return (unknown or hits)[0]
    return next(iter(call.arguments)) if len(call.arguments) == 1 else None


def violation(call: ToolCall, cls: str, instance: Any, shown: str, exc: BaseException | None) -> Violation:
    at = quoted(call, shown, cls, instance)
    allowed: list[str] = []
    if at is not None and (live := LIVE.get((cls, at))) is not None:
        allowed = [v for v in live(instance) if v != str(call.arguments.get(at))]
    return Violation.backend_failure(call.name, shown, exc is not None, call.arguments, at, allowed)
