"""How agents repair, from records alone: identical resubmission, recovery@k, pass^k, retry
overhead tokens and the share of rejections a schema-constrained decoder would have prevented.

Definitions (docs/conditions.md, "How agents repair"):
- an *attempt* is a call whose answer the environment judged (a self-check's first call, outcome
  `review`, is not one); a *rejection* is an attempt whose outcome is a Violation code; anything
  else is *accepted* (a lost game included); a *retry* is the attempt right after a rejection;
- identical resubmission: of a cell's retries, the share identical (the call log's `signature`:
  canonical JSON of tool name + arguments) to a call rejected earlier in the same episode;
- recovery@k, k = 1..budget: of the episodes with a rejection, the share whose first rejection
  is followed by an accepted attempt within k attempts; an accepted answer in text with no call
  (where an action is a call or a command: in BFCL's protocol it ends the turn) is a give-up, as
  "after an error" counts it, never a recovery, and no later attempt recovers that rejection. A
  fork (harness.fork) starts at a recorded failure: its fork point is its first rejection, so a
  fork repaired by its first call recovered at 1 (the rejection itself is the source's and is not
  counted among the fork's rejections);
- pass^k (tau-bench): per task with n >= k sample seeds of which c solved, C(c,k)/C(n,k),
  averaged over those tasks; at temperature 0 every seed plays the same episode, so it is flat
  by construction (`pass_k_flat`);
- retry overhead: tokens of the calls after an episode's first rejected call, per episode of the
  cell (with known usage) and per success;
- preventable share: of the rejections, those whose code `envs.contract.SCHEMA_PREVENTABLE`
  lists; `constrained` counts the side effects of constraining (refusal, cut mid-JSON);
- after an error: what the attempt right after each rejection did (`NEXT`), by the suite's action
  form (`action_form`: a tool call, a game command as a tool call, or a plan: text judged whole):
  the identical action again (the same `signature`); for calls and commands, the same function
  with other arguments (a tool name in common), another function, an answer in text with no call
  (in BFCL's protocol that ends the turn: the model gave up on the call); for a plan, a new plan
  (text is the action there: a different plan is the repair attempt); or nothing (the episode
  ended there: a budget, BFCL's force-quit). A class the cell's action forms do not have is None.
  Records older than the call log's `tools` leave these unknown.
A rate with nothing to count is None, never 0. An imported episode whose replay diverged from what
the model was shown (`extra.replay.divergence`) counts only its answers before the divergence: a
failure after it is one the model never saw.

`episode_columns` condenses one record's call logs into a few numbers as the record is read
(results.load): the report then never holds the call logs of 100,000 episodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb
from typing import Any, SupportsInt, cast

import pandas as pd

from envs.contract import violation_class
from results.columns import CALL, C
from results.divergence import shown_until
from results.heap import gives_back
from results.row_groups import row_groups
from results.stats import ALPHA, group_columns, sort_cells, wilson

PREFIX = "dyn."
ACCEPTED = frozenset({"accepted", "won", "lost", "done"})
NOT_ATTEMPTS = frozenset({"review", "harness_error"})
# recovery@k columns the text report shows; the JSON has every k up to the budget
SHOWN_K = (1, 2, 3)
# what the attempt after a rejection did, in the order the report shows them
NEXT = ("identical", "same_function", "other_function", "new_plan", "text", "ended")
# the classes each action form has; a record names a form other than a call in `extra.action` (the
# env's record_extra), one written before that field by its TextWorld protocol (`extra.protocol`)
FORMS = {
    "call": ("identical", "same_function", "other_function", "text", "ended"),
    "command": ("identical", "same_function", "other_function", "text", "ended"),
    "plan": ("identical", "new_plan", "ended"),
}
_PROTOCOL_FORMS = {"plan": "plan", "veriharness": "plan", "step": "command"}


def episode_columns(record: dict[str, Any]) -> dict[str, Any]:
    """One episode's repair path, from its call logs (`dyn.*` columns). results/dynamics_arrays.py
    computes the same for many episodes at once (the report's reader): a change here is made there
    too, and tests/results/test_dynamics_arrays.py compares the two on drawn records."""
    logs, config = record.get(C.calls), record.get(C.config)
    every: list[Any] = logs if isinstance(logs, list) else []
    calls = every[: shown_until(record)]
    # the answer a divergence is in: the model gave it after what it was shown (its action is known,
    # only what it got back is not what it saw); the next attempt of the last rejection before it
    beyond = [c for c in every[len(calls) :] if isinstance(c, dict) and c.get(CALL.outcome) not in NOT_ATTEMPTS][:1]
    decoding = (config or {}).get("decoding") if isinstance(config, dict) else None
    temperature = decoding.get("temperature") if isinstance(decoding, dict) else None
    # (index in calls, call) of each attempt
    attempts = [(i, c) for i, c in enumerate(calls) if isinstance(c, dict) and c.get(CALL.outcome) not in NOT_ATTEMPTS]
    rejected = [c.get(CALL.outcome) not in ACCEPTED for _, c in attempts]
    form = action_form(record)
    # a fork's first attempt answers its fork point, the source's rejected call (index -1 here)
    forked = bool(record.get(C.fork))
    first = -1 if forked else (rejected.index(True) if True in rejected else None)
    retries = [c for (_, c), before in zip(attempts[1:], rejected, strict=False) if before]
    known = all(c.get(CALL.signature) is not None for c in retries)
    after_first = None if first is None else next((j for j in range(first + 1, len(attempts)) if not rejected[j]), None)
    # the first accepted attempt after the first rejection; an answer in text is a give-up, no recovery
    gave_up = after_first is not None and _gave_up(attempts[after_first][1], form)
    recovered = None if after_first is None or gave_up or first is None else after_first - first
    codes = [c.get(CALL.outcome) for (_, c), r in zip(attempts, rejected, strict=True) if r]
    classes = [violation_class(str(code)) for code in codes]
    nexts = _after_errors([c for _, c in attempts] + beyond, rejected, form)
    after = [] if first is None else calls[attempts[first][0] + 1 :] if first >= 0 else calls
    tokens = [(c.get(CALL.prompt_tokens), c.get(CALL.completion_tokens)) for c in after]
    overhead = None if any(p is None or q is None for p, q in tokens) else sum(p + q for p, q in tokens)
    return {
        f"{PREFIX}retries": len(retries),
        f"{PREFIX}identical_retries": sum(bool(c.get(CALL.repeats_rejected)) for c in retries) if known else None,
        f"{PREFIX}rejections": len(codes),
        f"{PREFIX}schema_rejections": classes.count("schema"),
        f"{PREFIX}constrained_rejections": classes.count("constrained"),
        f"{PREFIX}first_rejection": first,
        f"{PREFIX}recovered_after": recovered,
        f"{PREFIX}overhead_tokens": overhead,
        f"{PREFIX}greedy": None if temperature is None else temperature == 0,
        f"{PREFIX}action_form": form,
        **{f"{PREFIX}next_{n}": None if nexts is None else nexts.count(n) for n in NEXT},
    }


def _gave_up(attempt: dict[str, Any], form: str) -> bool:
    """An accepted answer with no call where an action is a call or a command: the turn ended on
    text (the "gave up in text" of after an error). Unknown (False) in call logs without `tools`."""
    return form != "plan" and CALL.tools in attempt and not attempt.get(CALL.tools)


def action_form(record: dict[str, Any]) -> str:
    """What one action of this episode is (a key of `FORMS`), as its record says."""
    extra = record.get(C.extra)
    extra = extra if isinstance(extra, dict) else {}
    form = extra.get("action") or _PROTOCOL_FORMS.get(str(extra.get("protocol")))
    return form if form in FORMS else "call"


def _after_errors(attempts: list[Any], rejected: list[bool], form: str = "call") -> list[str] | None:
    """What the attempt after each rejected one did (`NEXT`); None when a call log lacks `tools`.
    `rejected` says it of the attempts counted; one attempt more (an import's answer at its
    divergence from what the model was shown) is only ever a next one."""
    if any(CALL.tools not in c for c in attempts):
        return None
    out = []
    for i, bad in enumerate(rejected):
        if not bad:
            continue
        if i + 1 == len(attempts):
            out.append("ended")
            continue
        this, then = attempts[i], attempts[i + 1]
        if then.get(CALL.signature) is not None and then.get(CALL.signature) == this.get(CALL.signature):
            out.append("identical")
        elif form == "plan":
            out.append("new_plan")
        elif not then.get(CALL.tools):
            out.append("text")
        elif set(then[CALL.tools]) & set(this.get(CALL.tools) or []):
            out.append("same_function")
        else:
            out.append("other_function")
    return out


COLUMNS = tuple(episode_columns({}))


def _rate(k: float, n: float) -> float | None:
    return None if not n else float(k) / float(n)


def _seed_counts(part: pd.DataFrame) -> pd.Series:
    """How many tasks have (n seeds, c solved), as a Series indexed by (n, c): a cell's tasks are
    counted once, and pass^k is then a sum over a few distinct pairs (100,000 episodes at once)."""
    solved = part[C.success].astype(bool).rename("c")
    per_task = solved.groupby(part[C.task_id], sort=False).agg(["size", "sum"])
    return per_task.value_counts()


def _pass_k(part: pd.DataFrame, k: int, counts: pd.Series | None = None) -> float | None:
    """tau-bench's pass^k over the sample seeds of each task with at least k of them."""
    counts = _seed_counts(part) if counts is None else counts
    total = weight = 0.0
    for key, tasks in counts.items():
        # a label of value_counts over the (size, sum) columns: two counts (the stubs say Hashable)
        n, c = cast(tuple[SupportsInt, SupportsInt], key)
        if int(n) >= k:
            total += tasks * comb(int(c), k) / comb(int(n), k)
            weight += tasks
    return total / weight if weight else None


@gives_back
def cell(part: pd.DataFrame, budget: int, greedy: bool | None) -> dict[str, Any]:
    """The repair-dynamics statistics of one cell's valid episodes."""

    def col(name: str) -> pd.Series:
        return pd.to_numeric(part[PREFIX + name], errors="coerce")

    retries, identical = col("retries"), col("identical_retries")
    known = identical.notna()
    # a fork's fork point counts as its first rejection (episode_columns)
    with_rejection = part[col("first_rejection").notna()]
    rec_after = pd.to_numeric(with_rejection[PREFIX + "recovered_after"], errors="coerce")
    recovery = {str(k): _rate(int((rec_after <= k).sum()), len(with_rejection)) for k in range(1, budget + 1)}
    low, high = (None, None)
    if len(with_rejection):
        low, high = wilson(int((rec_after <= 1).sum()), len(with_rejection), ALPHA)
    rejections, schema = col("rejections").sum(), col("schema_rejections").sum()
    p_low, p_high = wilson(int(schema), int(rejections), ALPHA) if rejections else (None, None)
    overhead = col("overhead_tokens")
    solved = int(part[C.success].astype(bool).sum())
    seeds = int(part[C.sample_seed].nunique())
    counts = _seed_counts(part)
    return {
        "retries": int(retries.sum()),
        "identical_resubmission": _rate(identical[known].sum(), retries[known].sum()),
        "episodes_with_rejection": len(with_rejection),
        "recovery_at": recovery,
        "recovery_at_1_ci_low": low,
        "recovery_at_1_ci_high": high,
        "pass_k": {str(k): _pass_k(part, k, counts) for k in range(1, seeds + 1)},
        "pass_k_flat": bool(greedy) and seeds > 1,
        "retry_overhead_tokens_per_episode": float(overhead.mean()) if overhead.notna().any() else None,
        "retry_overhead_tokens_per_success": float(overhead.sum()) / solved
        if solved and overhead.notna().all()
        else None,
        "rejections": int(rejections),
        "schema_rejections": int(schema),
        "constrained_rejections": int(col("constrained_rejections").sum()),
        "preventable_share": _rate(schema, rejections),
        **_next_rates(part),
        "preventable_ci_low": p_low,
        "preventable_ci_high": p_high,
    }


def _next_rates(part: pd.DataFrame) -> dict[str, Any]:
    """After an error: how many rejections had a known next attempt, and each kind's share (None
    for a kind no action form of the cell has: a plan has no "other function")."""
    counts = {n: pd.to_numeric(part[f"{PREFIX}next_{n}"], errors="coerce") for n in NEXT}
    known = counts[NEXT[0]].notna()
    total = int(sum(counts[n][known].sum() for n in NEXT))
    forms = set(part[PREFIX + "action_form"][known]) if PREFIX + "action_form" in part else {"call"}
    kinds = {n for f in forms for n in FORMS.get(str(f), FORMS["call"])}
    return {
        "after_error_n": total if known.any() else None,
        "after_error": {n: _rate(counts[n][known].sum(), total) if n in kinds else None for n in NEXT},
        "after_error_counts": {n: int(counts[n][known].sum()) for n in NEXT},
    }


@gives_back
def dynamics(df: pd.DataFrame, by: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """One row per cell (condition x the report's groups) of the valid episodes."""
    if PREFIX + "retries" not in df:
        return []
    cols = [C.condition, *group_columns(df, by)]
    rows = []
    # the columns a cell reads, of the valid rows, taken once (not every column of the frame)
    read = [
        *dict.fromkeys(
            [*cols, C.success, C.budget, C.task_id, C.sample_seed, *(c for c in df if str(c).startswith(PREFIX))]
        )
    ]
    # the key columns grouped, then each group's rows of the columns read taken: grouping them all
    # would take every column into sorted order at once (a million episodes: 200 MB)
    for keys, at in row_groups(df, cols, df[C.success].notna().to_numpy()):
        part = df[read].take(at)
        budget = int(part[C.budget].max())
        greedy = bool(part[PREFIX + "greedy"].eq(True).all())
        rows.append(
            {**dict(zip(cols, keys if isinstance(keys, tuple) else (keys,), strict=True)), **cell(part, budget, greedy)}
        )
    # the cells' order (results.stats.summary)
    if not rows:
        return []
    # the columns are names (str); pandas-stubs key a frame's records by any Hashable
    return cast(list[dict[str, Any]], sort_cells(pd.DataFrame(rows), cols).to_dict("records"))
