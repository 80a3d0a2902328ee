"""Backend faults on a seeded schedule, in simulated time.

The schedule: a task draws (from its seed, never the clock) whether it carries a fault, which
kind, and how long the service needs to recover. The fault fires on the first write call that
passed the input contract (the call that matters, as the seed's `open_dispute` timeout), before
the backend executes it, so a retry is always safe. While the service has not recovered, every
backend call gets the same fault again (a wasted call); an auth failure never recovers.

Time is simulated: the clock is an integer of seconds that advances by `CALL_S` per backend call
(`TIMEOUT_S` for a call that times out) and by the `wait` tool. Nothing sleeps for real.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from envs.tools.output import FaultShape, ProblemDetails, ToolOutput

FaultKind = Literal["timeout", "rate_limit", "unavailable", "connection_reset", "auth"]
FAULT_KINDS: tuple[FaultKind, ...] = ("timeout", "rate_limit", "unavailable", "connection_reset", "auth")
CALL_S = 1
TIMEOUT_S = 10
_SALT = 0xFA17


class ReadTimeout(Exception):
    """The service did not answer within the client's timeout."""


class HTTPStatusError(Exception):
    def __init__(self, status: int, reason: str, url: str):
        side = "Client" if status < 500 else "Server"
        super().__init__(f"{side} error '{status} {reason}' for url '{url}'")
        self.status = status


@dataclass(frozen=True)
class FaultPlan:
    kind: FaultKind
    # seconds the service needs after the fault before a call can succeed (None: never)
    retry_after: int | None

    @property
    def permanent(self) -> bool:
        return self.kind == "auth"

    @classmethod
    def draw(cls, seed: int, rate: float) -> FaultPlan | None:
        """Every draw is made whatever the rate, so the tasks faulted at a lower rate are a subset
        of those faulted at a higher one, with the same kind and delay."""
        rng = random.Random(seed * 1_000_003 + _SALT)
        u = rng.random()
        kind = rng.choice(FAULT_KINDS)
        delays: dict[str, int | None] = {
            "timeout": 0,
            "connection_reset": 0,
            "rate_limit": rng.choice([5, 10, 20, 30]),
            "unavailable": rng.choice([15, 30, 60]),
            "auth": None,
        }
        return cls(kind, delays[kind]) if u < rate else None


def _exception(kind: FaultKind, url: str) -> Exception:
    if kind == "timeout":
        return ReadTimeout("The read operation timed out")
    if kind == "connection_reset":
        return ConnectionResetError(104, "Connection reset by peer")
    status, reason = {
        "rate_limit": (429, "Too Many Requests"),
        "unavailable": (503, "Service Unavailable"),
        "auth": (401, "Unauthorized"),
    }[kind]
    return HTTPStatusError(status, reason, url)


_PROBLEMS: dict[str, tuple[int, str, str]] = {
    "timeout": (504, "The service did not answer in time", "The request was not executed; sending it again is safe."),
    "connection_reset": (
        502,
        "The connection to the service was reset",
        "The request did not reach the service; sending it again is safe.",
    ),
    "rate_limit": (429, "Too many requests", "The rate limit of the service is reached; the request was not executed."),
    "unavailable": (
        503,
        "The service is temporarily unavailable",
        "The service is down for maintenance; the request was not executed.",
    ),
    "auth": (
        401,
        "The tool's credentials were rejected",
        "The service refused the credentials of this tool. Retrying will not help: a person has to restore the access.",
    ),
}


def problem(kind: FaultKind, service: str, retry_after: int | None) -> ProblemDetails:
    status, title, detail = _PROBLEMS[kind]
    return ProblemDetails(
        type=f"https://{service}/problems/{kind.replace('_', '-')}",
        title=title,
        status=status,
        detail=detail,
        retryable=kind != "auth",
        retry_after=retry_after,
        owner_action_required=kind == "auth",
    )


def raw_text(exc: BaseException) -> str:
    """What an unguarded tool leaks: the exception's last traceback line."""
    return f"{type(exc).__name__}: {exc}"


@dataclass
class Transport:
    """The network between the tools and the simulated service; it owns the simulated clock."""

    plan: FaultPlan | None
    service: str
    path: str = "/v1"
    clock: int = 0
    fired_on: str | None = None
    fired_at: int | None = None
    recover_at: int | None = None
    hits: int = 0

    @property
    def url(self) -> str:
        return f"https://{self.service}{self.path}"

    @property
    def down(self) -> bool:
        """True when the next backend call would get the fault again."""
        if self.plan is None or self.fired_at is None:
            return False
        return self.plan.permanent or self.clock < (self.recover_at or 0)

    def send(self, tool: str, write: bool) -> None:
        """One backend call: raises the fault when it applies; the clock advances either way."""
        if self.plan is None or (self.fired_at is None and not write) or (self.fired_at is not None and not self.down):
            self.clock += CALL_S
            return
        self.clock += TIMEOUT_S if self.plan.kind == "timeout" else CALL_S
        self.hits += 1
        if self.fired_at is None:
            self.fired_on, self.fired_at = tool, self.clock
            self.recover_at = None if self.plan.retry_after is None else self.clock + self.plan.retry_after
        raise _exception(self.plan.kind, self.url)

    def wait(self, seconds: int) -> None:
        self.clock += seconds

    def remaining(self) -> int | None:
        if self.plan is None or self.plan.permanent or self.recover_at is None:
            return None
        return max(0, self.recover_at - self.clock)

    def output(self, exc: BaseException, shape: FaultShape) -> ToolOutput:
        assert self.plan is not None
        if shape == "raw":
            return ToolOutput(status="error", error=raw_text(exc))
        return ToolOutput(status="error", error=problem(self.plan.kind, self.service, self.remaining()))
