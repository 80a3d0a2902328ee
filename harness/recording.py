"""Turn what the loop observed into one EpisodeRecord."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from conditions.compose import is_composition, parse
from envs.contract import Accepted, Violation
from harness.loop import EpisodeResult
from harness.types import CallLog, EndReason, EpisodeKey, EpisodeRecord


def _end_reason(r: EpisodeResult) -> EndReason:
    if r.harness_error:
        return "harness_error"
    if r.won:
        return "won"
    if r.lost:
        return "lost"
    return "done" if r.done else "budget"


def _final_failure(r: EpisodeResult) -> str | None:
    if r.harness_error or r.won:
        return None
    last = r.outcomes[-1] if r.outcomes else None
    if isinstance(last, Violation):
        return last.code
    if isinstance(last, Accepted):
        return "lost" if last.lost else "incomplete"
    return None


def _shows_allowed(params: dict[str, Any]) -> bool | None:
    """Whether the condition's composition has the `allowed` part (which states the bounds);
    None for a renderer of its own, whose text only its author knows."""
    spelled = str(params.get("composition") or "")
    return parse(spelled).has("allowed") if is_composition(spelled) else None


def _total(values: Iterable[int | None]) -> int | None:
    """A sum that stays unknown when any part is unknown: a missing usage is never a 0."""
    total = 0
    for v in values:
        if v is None:
            return None
        total += v
    return total


def build_record(
    key: EpisodeKey,
    result: EpisodeResult,
    *,
    run_id: str,
    condition_params: dict[str, Any],
    config: dict[str, Any],
    transcript: str,
    extra: dict[str, Any] | None = None,
    fork_of: dict[str, Any] | None = None,
    reference: set[str] | None = None,
) -> EpisodeRecord:
    violations = [o for o in result.outcomes if isinstance(o, Violation)]
    attempts = [o for o, kind in zip(result.outcomes, result.outcome_kinds, strict=True) if kind == "action"]
    # validity of the first attempt at an action; messages to a simulated user are not attempts
    first_valid = None if not attempts else not isinstance(attempts[0], Violation)
    success = None if result.harness_error else bool(result.won)
    bounded = sum(1 for v in violations if v.bounds is not None)
    if bounded:  # rejections with a range or a length to state, and whether the condition stated it
        extra = {**(extra or {}), "bounds": {"rejections": bounded, "shown": _shows_allowed(condition_params)}}
    end = _end_reason(result)
    return EpisodeRecord(
        run_id=run_id,
        **key.model_dump(),
        condition_params=condition_params,
        config=config,
        model_id=result.model_id,
        success=success,
        end_reason=end,
        limit_hit=end == "budget",
        budget_unit=result.budget_unit,
        budget_spent=result.spent,
        model_calls=len(result.calls),
        action_calls=sum(c.kind == "action" for c in result.calls),
        review_calls=sum(c.kind == "review" for c in result.calls),
        tool_calls=result.submitted,
        invalid_calls=len(violations),
        first_call_valid=first_valid,
        repaired=bool(success and first_valid is False),
        failure_codes=[v.code for v in violations],
        final_failure=_final_failure(result),
        prompt_tokens=_total(c.prompt_tokens for c in result.calls),
        completion_tokens=_total(c.completion_tokens for c in result.calls),
        usage_missing=sum(c.prompt_tokens is None or c.completion_tokens is None for c in result.calls),
        prompt_words=sum(c.prompt_words for c in result.calls),
        latency_s=round(sum(c.latency_s for c in result.calls), 4),
        fenced_answers=sum(c.fenced for c in result.calls),
        calls=result.calls,
        extra={
            "messages_to_user": result.outcome_kinds.count("message"),
            **({"force_quit": True} if result.force_quit else {}),
            **(extra or {}),
        },
        harness_error=result.harness_error,
        transcript=transcript,
        **(_fork_fields(result, fork_of, extra or {}, reference) if key.fork is not None else {}),
    )


def unsaved_record(
    key: EpisodeKey,
    result: EpisodeResult,
    exc: Exception,
    *,
    run_id: str,
    condition_params: dict[str, Any],
    config: dict[str, Any],
) -> EpisodeRecord:
    """The harness-error record that stands for an episode whose transcript could not be written
    (its calls, and so its cost, kept)."""
    error = EpisodeResult(harness_error=f"recording failed: {type(exc).__name__}: {exc}", calls=result.calls)
    return build_record(key, error, run_id=run_id, condition_params=condition_params, config=config, transcript="")


_VALID = ("accepted", "won", "lost", "done")


def repairs(log: dict[str, Any], tool: str | None, failed: str | None = None) -> bool:
    """`_repair` on a recorded call log (a record's `calls` entry)."""
    return _repair(CallLog.model_validate(log), tool, failed) is not None


def _repair(log: CallLog, tool: str | None, failed: str | None = None) -> str | None:
    """The signature of the call of an answer that repairs a failed call of `tool`: an accepted
    call of that tool other than the failed call itself (`failed`: its signature; the same call
    sent again and taken because something else changed the state is a retry, not a repair of the
    call). None: none. A failed action that is no call (a plan, a command, or a record that does
    not say) is repaired by an accepted answer."""
    if tool is None:  # "": repaired, by an answer whose signature the log does not hold
        return (log.signature or "") if log.outcome in _VALID else None
    calls = zip(log.tools, log.call_outcomes, log.call_signatures or [""] * len(log.tools), strict=False)
    return next((sig for name, label, sig in calls if name == tool and label in _VALID and sig != failed), None)


def _fork_fields(
    result: EpisodeResult, fork_of: dict[str, Any] | None, extra: dict[str, Any], reference: set[str] | None
) -> dict[str, Any]:
    """A fork's own facts: its calls are those after the fork point (`result.prefix` holds what
    the replay spent). The repair is an accepted call of the failed call's tool (an answer in text,
    or of other tools only, repairs nothing); `repaired_next` asks it of the next answer,
    `calls_to_repair` counts answers to the first. `progressed`: the repairing call is one of the
    task's reference calls, or the fork solved the part the failure was in. In a task of parts
    (envs.contract.Segmented), that part, and whether the fork solved it."""
    segment = result.prefix.segment if result.prefix else None
    tool, failed = (fork_of or {}).get("tool"), (fork_of or {}).get("signature")
    # (model call index, the repairing call's signature or None) of each answer the fork played
    answers = [(i, _repair(c, tool, failed)) for i, c in enumerate(result.calls) if c.outcome != "review"]
    first = next(((i, sig) for i, sig in answers if sig is not None), None)
    solved = _segment_solved(segment, extra, result)
    progressed = None
    if not result.harness_error and answers and (reference is not None or solved is not None):
        progressed = first is not None and (first[1] in (reference or set()) or bool(solved))
    return {
        "fork_of": fork_of,
        "repaired_next": None if not answers or result.harness_error else answers[0][1] is not None,
        "progressed": progressed,
        "calls_to_repair": first[0] + 1 if first is not None else None,
        "prefix_calls": result.prefix.calls if result.prefix else None,
        "fork_segment": segment,
        "segment_solved": solved,
    }


def _segment_solved(segment: int | None, extra: dict[str, Any], result: EpisodeResult) -> bool | None:
    solved = extra.get("segments_solved")
    if segment is None or result.harness_error or not isinstance(solved, list):
        return None
    return bool(segment < len(solved) and solved[segment])
