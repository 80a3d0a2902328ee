"""A rejected call as the structured failure every condition renders (`Violation`), what a field
allows that no list can name (`Bounds`), and which failures a schema-constrained decoder prevents.
`envs.contract` re-exports them: they are the contract's failure type.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from envs.tracebacks import format_exception

# how much of a model's text a Violation quotes back as `observed`
OBSERVED_CHARS = 500
NAME_CHARS = 200


class Bounds(BaseModel):
    """What a field allows that no list can name: numeric bounds, a multiple, lengths, a pattern
    (pydantic's own constraints, `Field(ge=10, le=2048)`). Unset parts are None."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ge: float | None = None
    gt: float | None = None
    le: float | None = None
    lt: float | None = None
    multiple_of: float | None = None
    min_length: int | None = None
    max_length: int | None = None
    pattern: str | None = None

    def given(self) -> dict[str, Any]:
        """The parts set, numbers that are whole written as integers (`le: 2048`, not 2048.0)."""
        out: dict[str, Any] = {}
        for name, value in self.model_dump(exclude_none=True).items():
            out[name] = int(value) if isinstance(value, float) and value.is_integer() else value
        return out


class Violation(BaseModel):
    """A structured failure. Conditions render it; environments never format feedback themselves.

    message: the validator's own short diagnostic, with no alternatives in it (RawDiag).
    raw: the real exception text or traceback, as an unguarded tool would leak it.
    allowed: the values allowed at the location, where they can be listed; bounds: what is allowed
    there that no list names (a range, lengths, a pattern), or None.
    """

    model_config = ConfigDict(frozen=True)

    code: str
    location: str | None = None
    observed: Any = None
    allowed: list[str] = Field(default_factory=list)
    message: str
    raw: str = ""
    tool: str | None = None
    bounds: Bounds | None = None
    # what a protocol's own feedback renderers read beyond these fields (veriharness: its
    # GateReport); never written to a transcript or a record
    detail: Any = Field(default=None, exclude=True)

    @model_serializer(mode="wrap")
    def _without_bounds(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """A Violation with no bounds keeps the form it had before bounds existed (a fork checks
        recorded outcomes against rebuilt ones, key for key)."""
        data: dict[str, Any] = handler(self)
        if self.bounds is None:
            data.pop("bounds", None)
        else:
            data["bounds"] = self.bounds.given()
        return data

    @classmethod
    def from_exception(cls, exc: BaseException, **fields: Any) -> Violation:
        if "message" not in fields:
            text = str(exc)
            fields["message"] = text.splitlines()[0] if text else type(exc).__name__
        return cls(raw=format_exception(exc), **fields)

    # The failures every environment meets, built in one place so that they read the same
    # whichever environment or tool mode produced them.

    @classmethod
    def no_action(cls, text: str, allowed: list[str] | None = None) -> Violation:
        """A turn with no tool call where an action was needed."""
        return cls(
            code="no_action",
            message="the answer contained no tool call",
            observed=text[:OBSERVED_CHARS],
            allowed=list(allowed or []),
        )

    @classmethod
    def refusal(cls, text: str) -> Violation:
        """A server that constrains output answered with a refusal instead of a call."""
        return cls(code="refusal", message="the model refused", observed=text[:OBSERVED_CHARS])

    @classmethod
    def cut_at_max_tokens(cls, text: str) -> Violation:
        """Constrained output cut by max_tokens: unfinished JSON, neither a call nor an answer."""
        return cls(
            code="cut_at_max_tokens",
            message="the answer was cut at max_tokens before its JSON ended",
            observed=text[:OBSERVED_CHARS],
        )

    @classmethod
    def unparseable_call(cls, error: str, text: str) -> Violation:
        """The text looked like a tool call that could not be read."""
        return cls(code="unparseable_call", message=error, observed=text[:OBSERVED_CHARS], raw=error)

    @classmethod
    def game_over(cls, tool: str) -> Violation:
        """A call after the game ended (the loop stops at the end; this answers a direct caller)."""
        return cls(code="game_over", message="the game has ended", tool=tool, observed=tool)

    @classmethod
    def gate_failure(cls, code: str, message: str, location: str, observed: Any, raw: str, detail: Any) -> Violation:
        """An attempt a protocol's gates rejected (veriharness); `detail` is what its renderers read."""
        return cls(code=code, message=message, location=location, observed=observed, raw=raw, detail=detail)

    @classmethod
    def unknown_tool(cls, name: str, allowed: list[str]) -> Violation:
        return cls(
            code="unknown_tool",
            location="name",
            observed=name[:NAME_CHARS],
            allowed=list(allowed),
            message=f"there is no tool named {name[:100]!r}",
            tool=name[:NAME_CHARS],
        )

    # A call checked against a JSON-schema function doc rather than a pydantic model (BFCL's
    # tools): what pydantic would have said, in the words of a Python call.

    @classmethod
    def unexpected_argument(cls, tool: str, name: str, allowed: list[str]) -> Violation:
        return cls(
            code="unexpected_keyword_argument",
            location=f"arguments.{name}",
            observed=name[:NAME_CHARS],
            allowed=list(allowed),
            tool=tool,
            message=f"{tool}() got an unexpected keyword argument {name[:100]!r}",
        )

    @classmethod
    def missing_argument(cls, tool: str, name: str) -> Violation:
        return cls(
            code="missing",
            location=f"arguments.{name}",
            tool=tool,
            allowed=[],
            message=f"{tool}() is missing the required argument {name!r}",
        )

    @classmethod
    def wrong_type(cls, code: str, tool: str, name: str, value: Any, expected: str, got: str) -> Violation:
        """`code` is the one pydantic gives the expected type (`int_type`): violation_class counts both alike."""
        return cls(
            code=code,
            location=f"arguments.{name}",
            observed=value,
            tool=tool,
            allowed=[expected],
            message=f"{name} must be of type {expected}, got {got}",
        )

    @classmethod
    def not_an_option(cls, tool: str, name: str, value: Any, allowed: list[str]) -> Violation:
        return cls(
            code="enum",
            location=f"arguments.{name}",
            observed=value,
            allowed=list(allowed),
            tool=tool,
            message=f"{name}: {str(value)[:100]!r} is not one of the options",
        )

    @classmethod
    def backend_failure(
        cls, tool: str, shown: str, raised: bool, arguments: dict[str, Any], at: str | None, allowed: list[str]
    ) -> Violation:
        """A call the backend refused: it raised (`execution_error`) or answered with an error
        (`backend_error`); `shown` is what it said, `at` the argument it blames, if any."""
        return cls(
            code="execution_error" if raised else "backend_error",
            location=None if at is None else f"arguments.{at}",
            observed=None if at is None else arguments.get(at),
            allowed=list(allowed),
            message=shown[: OBSERVED_CHARS * 4],
            raw=shown,
            tool=tool,
        )


# What a decoder constrained to the tools' JSON Schema makes impossible, by Violation code: an
# answer that is no call or no JSON, an unknown tool, a missing or an extra field, a wrong type, a
# value outside an enum. Every other code is a domain rule, a state or an invented value that a
# schema cannot state (a pattern, a cross-field rule, an id that must exist). The two side effects
# of constraining are outcomes of their own. results.dynamics reads this table.
SCHEMA_PREVENTABLE = frozenset(
    {
        "no_action",
        "unparseable_call",
        "unknown_tool",
        "missing",
        "extra_forbidden",
        "unexpected_keyword_argument",
        "literal_error",
        "enum",
        "string_type",
        "int_type",
        "int_parsing",
        "int_from_float",
        "float_type",
        "float_parsing",
        "bool_type",
        "bool_parsing",
        "dict_type",
        "list_type",
        "model_type",
        "model_attributes_type",
        "none_required",
        "json_invalid",
        "json_type",
    }
)
CONSTRAINED_SIDE_EFFECTS = frozenset({"refusal", "cut_at_max_tokens"})


def violation_class(code: str) -> str:
    """`schema` (a constrained decoder prevents it), `constrained` (a side effect of
    constraining) or `domain` (the rest)."""
    return "schema" if code in SCHEMA_PREVENTABLE else "constrained" if code in CONSTRAINED_SIDE_EFFECTS else "domain"
