"""`results.dynamics.episode_columns` for many episodes at once, from Arrow arrays: the `dyn.*` columns
of a million records in a few numpy passes over their call logs, where one Python call per record
took a quarter of a report (issue 67). The definitions are `episode_columns`'; a test compares the two
on records drawn to reach every branch.

Input (`Episodes`): each episode's call logs (a list of structs with `outcome`, `signature`, `tools`,
`repeats_rejected`, `prompt_tokens`, `completion_tokens`), its decoding temperature, its
`extra.action` / `extra.protocol` and the answer its replay diverged at. Output: one numpy array per
`dyn.*` column and a mask of the entries that are None.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from envs.contract import violation_class
from results.dynamics import _PROTOCOL_FORMS, ACCEPTED, FORMS, NEXT, NOT_ATTEMPTS, PREFIX


class NotColumnar(Exception):
    """The records hold something only the per-record reader reads as it should (results.load)."""


CALL_TYPE = pa.struct(
    [
        ("outcome", pa.string()),
        ("signature", pa.string()),
        ("tools", pa.list_(pa.string())),
        ("repeats_rejected", pa.bool_()),
        ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()),
    ]
)
CALLS_TYPE = pa.list_(CALL_TYPE)


@dataclass(frozen=True)
class Episodes:
    calls: pa.Array  # list<struct<...>> per episode (null: no call log)
    temperature: pa.Array  # float64
    action: pa.Array  # string: extra.action
    protocol: pa.Array  # string: extra.protocol
    answer: pa.Array  # int64: extra.replay.divergence.answer
    fork: pa.Array  # string: the fork point of a fork's episode ("" or null: none)


def _codes(values: pa.Array) -> tuple[np.ndarray, list[object]]:
    """Dictionary codes of a string array (-1: null) and its distinct values."""
    encoded = pc.dictionary_encode(values, null_encoding="mask")
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = np.asarray(encoded.indices.fill_null(-1), dtype=np.int64)
    return codes, encoded.dictionary.to_pylist()


def _flag(codes: np.ndarray, values: list[object], test: Callable[[object], bool], null: bool) -> np.ndarray:
    """Per entry, `test` of its value (`null` where it is null)."""
    table = np.array([bool(test(v)) for v in values] + [null], dtype=np.bool_)
    flags: np.ndarray = table[codes]
    return flags


def _count(owner: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(owner[mask], minlength=n)


def _firsts(owner: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For owners sorted ascending: the owners present and the index of each one's first entry."""
    present, first = np.unique(owner, return_index=True)
    return present, first


def _forms(ep: Episodes) -> np.ndarray:
    """`results.dynamics.action_form` of each episode."""
    act_codes, act_values = _codes(ep.action)
    pro_codes, pro_values = _codes(ep.protocol)
    act = np.array([*act_values, None], dtype=object)[act_codes]
    pro = np.array([_PROTOCOL_FORMS.get(str(v)) for v in [*pro_values, None]], dtype=object)[pro_codes]
    chosen = np.where(np.array([bool(a) for a in act], dtype=bool), act, pro)
    return np.array([f if f in FORMS else "call" for f in chosen], dtype=object)


def _list_items(offsets: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each of `rows` (indices into a list array with `offsets`): (which row, value index) of its items."""
    starts, ends = offsets[rows], offsets[rows + 1]
    lengths = ends - starts
    owner = np.repeat(np.arange(len(rows)), lengths)
    at = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths) + np.repeat(starts, lengths)
    return owner, at


def _shares_a_tool(tools: pa.ListArray, this: np.ndarray, then: np.ndarray) -> np.ndarray:
    """Per pair of calls, whether `then` calls a tool that `this` called."""
    if not len(this):
        return np.zeros(0, dtype=bool)
    offsets = np.asarray(tools.offsets, dtype=np.int64)
    names, _ = _codes(tools.values)
    width = int(names.max(initial=0)) + 2
    own_this, at_this = _list_items(offsets, this)
    own_then, at_then = _list_items(offsets, then)
    keys_this = own_this * width + names[at_this] + 1
    keys_then = own_then * width + names[at_then] + 1
    hit = np.isin(keys_then, keys_this)
    return np.bincount(own_then[hit], minlength=len(this)) > 0


def episode_arrays(ep: Episodes) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{`dyn.*` column: (values, None mask)} for each episode, as `episode_columns` gives them."""
    n = len(ep.calls)
    calls = ep.calls.combine_chunks() if isinstance(ep.calls, pa.ChunkedArray) else ep.calls
    parent = np.asarray(pc.list_parent_indices(calls), dtype=np.int64)
    flat = calls.flatten()
    if flat.null_count:  # a call log that is no object: episode_columns' own rules
        raise NotColumnar("a call log entry is null")
    m = len(flat)
    per = np.bincount(parent, minlength=n)
    pos = np.arange(m) - (np.cumsum(per) - per)[parent]
    # an imported episode counts its answers up to the divergence (results.divergence), a slice
    answer = np.asarray(ep.answer.fill_null(np.iinfo(np.int64).max), dtype=np.int64)
    limit = np.where(answer < 0, np.maximum(per + answer, 0), answer)
    shown = pos < limit[parent]

    def field(name: str) -> pa.Array:
        return flat.field(name)

    out_codes, out_values = _codes(field("outcome"))
    is_attempt = _flag(out_codes, out_values, lambda v: v not in NOT_ATTEMPTS, True)
    accepted = _flag(out_codes, out_values, lambda v: v in ACCEPTED, False)
    schema = _flag(
        out_codes, out_values, lambda v: violation_class(str(v)) == "schema", violation_class("None") == "schema"
    )
    constrained = _flag(
        out_codes,
        out_values,
        lambda v: violation_class(str(v)) == "constrained",
        violation_class("None") == "constrained",
    )
    sig_codes, _ = _codes(field("signature"))
    repeats = np.asarray(field("repeats_rejected").fill_null(False), dtype=bool)
    tools = field("tools")
    tools_null = np.asarray(tools.is_null(), dtype=bool)
    tools_len = np.asarray(pc.list_value_length(tools).fill_null(0), dtype=np.int64)
    tokens_known = np.asarray(field("prompt_tokens").is_valid(), dtype=bool) & np.asarray(
        field("completion_tokens").is_valid(), dtype=bool
    )
    tokens = np.asarray(field("prompt_tokens").fill_null(0), dtype=np.int64) + np.asarray(
        field("completion_tokens").fill_null(0), dtype=np.int64
    )

    attempts = np.flatnonzero(shown & is_attempt)
    owner = parent[attempts]
    k = len(attempts)
    per_a = np.bincount(owner, minlength=n)
    rank = np.arange(k) - (np.cumsum(per_a) - per_a)[owner]
    rejected = ~accepted[attempts]
    after_rejection = np.zeros(k, dtype=bool)
    after_rejection[1:] = rejected[:-1]
    retry = (rank >= 1) & after_rejection
    retries = _count(owner, retry, n)
    known = _count(owner, retry & (sig_codes[attempts] < 0), n) == 0
    identical = _count(owner, retry & repeats[attempts], n)
    rejections = _count(owner, rejected, n)
    schema_n = _count(owner, rejected & schema[attempts], n)
    constrained_n = _count(owner, rejected & constrained[attempts], n)

    big = np.iinfo(np.int64).max
    first_rank = np.full(n, big, dtype=np.int64)
    first_pos = np.full(n, big, dtype=np.int64)
    rej_at = np.flatnonzero(rejected)
    present, first = _firsts(owner[rej_at], n)
    first_rank[present] = rank[rej_at[first]]
    first_pos[present] = pos[attempts[rej_at[first]]]
    # a fork's first attempt answers its fork point, the source's rejected call (rank -1)
    forked = np.asarray(pc.fill_null(pc.not_equal(ep.fork, ""), False), dtype=bool)
    first_rank[forked] = -1
    first_pos[forked] = -1
    has_first = first_rank != big

    forms = _forms(ep)
    later = np.flatnonzero(~rejected & (rank > first_rank[owner]))
    recovered = np.full(n, -1, dtype=np.int64)
    present, first = _firsts(owner[later], n)
    # an answer in text where an action is a call or a command is a give-up, never a recovery
    then = attempts[later[first]]
    gave_up = (forms[present] != "plan") & ~tools_null[then] & (tools_len[then] == 0)
    recovered[present[~gave_up]] = rank[later[first]][~gave_up] - first_rank[present[~gave_up]]

    after = shown & (pos > first_pos[parent])
    overhead = np.bincount(parent[after], weights=tokens[after], minlength=n).round().astype(np.int64)
    overhead_unknown = _count(parent, after & ~tokens_known, n) > 0

    temperature = ep.temperature
    greedy_null = np.asarray(temperature.is_null(), dtype=bool)
    greedy = np.asarray(temperature.fill_null(1.0), dtype=np.float64) == 0

    # what followed each rejected attempt (results.dynamics._after_errors); past a divergence, the
    # first attempt beyond it is the next one of the last rejection before it, and nothing more
    beyond_at = np.flatnonzero(~shown & is_attempt)
    present, first = _firsts(parent[beyond_at], n)
    beyond = np.full(n, -1, dtype=np.int64)
    beyond[present] = beyond_at[first]
    beyond_no_tools = np.zeros(n, dtype=bool)
    beyond_no_tools[present] = tools_null[beyond[present]]
    no_tools = (_count(owner, tools_null[attempts], n) > 0) | beyond_no_tools
    kind = np.full(len(rej_at), -1, dtype=np.int64)
    last = rank[rej_at] == per_a[owner[rej_at]] - 1
    ended = last & (beyond[owner[rej_at]] < 0)
    kind[ended] = NEXT.index("ended")
    go = np.flatnonzero(~ended)
    following = attempts[np.minimum(rej_at[go] + 1, k - 1)] if k else rej_at[go]
    this = attempts[rej_at[go]]
    then = np.where(last[go], beyond[owner[rej_at[go]]], following)
    same_sig = (sig_codes[then] >= 0) & (sig_codes[then] == sig_codes[this])
    plan = forms[owner[rej_at[go]]] == "plan"
    text = tools_len[then] == 0
    open_ = ~same_sig & ~plan & ~text
    shares = np.zeros(len(go), dtype=bool)
    shares[open_] = _shares_a_tool(tools, this[open_], then[open_])
    kind[go] = np.select(
        [same_sig, plan, text, shares],
        [NEXT.index("identical"), NEXT.index("new_plan"), NEXT.index("text"), NEXT.index("same_function")],
        NEXT.index("other_function"),
    )

    none = np.zeros(n, dtype=bool)
    columns = {
        "retries": (retries, none),
        "identical_retries": (identical, ~known),
        "rejections": (rejections, none),
        "schema_rejections": (schema_n, none),
        "constrained_rejections": (constrained_n, none),
        "first_rejection": (np.where(has_first, first_rank, 0), ~has_first),  # -1: a fork's fork point
        "recovered_after": (np.maximum(recovered, 0), recovered < 0),
        "overhead_tokens": (overhead, overhead_unknown),
        "greedy": (greedy, greedy_null),
        "action_form": (forms, none),
    }
    rej_owner = owner[rej_at]
    for i, name in enumerate(NEXT):
        columns[f"next_{name}"] = (_count(rej_owner, kind == i, n), no_tools)
    return {PREFIX + name: value for name, value in columns.items()}
