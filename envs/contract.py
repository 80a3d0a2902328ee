"""The tool contract between the episode loop and an environment.

These are the env-facing record types. They live here, not in `harness.types`, because `envs/`
and `conditions/` may not import `harness`; every package imports them from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from envs import study

# the structured failure has a module of its own; every package imports it from here, with the contract
from envs.violation import CONSTRAINED_SIDE_EFFECTS as CONSTRAINED_SIDE_EFFECTS
from envs.violation import NAME_CHARS as NAME_CHARS
from envs.violation import OBSERVED_CHARS as OBSERVED_CHARS
from envs.violation import SCHEMA_PREVENTABLE as SCHEMA_PREVENTABLE
from envs.violation import Bounds as Bounds
from envs.violation import Violation as Violation
from envs.violation import violation_class as violation_class


class ToolSpec(BaseModel):
    """A tool as the model sees it: OpenAI function format."""

    name: str
    description: str
    parameters: dict[str, Any]
    # the tool object a protocol sends as it is (BFCL's handler's, with its `response` schema and
    # its float `format`); None: built from the three fields above
    wire: dict[str, Any] | None = None

    def openai(self) -> dict[str, Any]:
        if self.wire is not None:
            return self.wire
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }


_SURROGATE = re.compile("[\ud800-\udfff]")


def valid_unicode(value: Any) -> Any:
    """Model output as text UTF-8 can carry: a lone surrogate (a JSON "\\ud800" from a server)
    becomes U+FFFD, so the answer can be sent back, logged and recorded like any other."""
    if isinstance(value, str):
        return value if value.isascii() else _SURROGATE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {valid_unicode(k): valid_unicode(v) for k, v in value.items()}
    if isinstance(value, list):
        return [valid_unicode(v) for v in value]
    return value


class ToolCall(BaseModel):
    """One tool call the model made, however it was obtained."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    id: str | None = None
    # how the call was obtained: native | tag | fenced | bare | llama, or text_<mode> for a call a
    # native-mode server returned as text (see harness.serving.backends.parse), bfcl for one BFCL's
    # prompting decoder read (envs.bfcl.decode)
    parse_mode: str = "native"

    @field_validator("name", "arguments", mode="before")
    @classmethod
    def _unicode(cls, value: Any) -> Any:
        return valid_unicode(value)


class TextAnswer(BaseModel):
    """A model turn without a tool call, offered to environments that read text (plan JSON, chat)."""

    text: str
    fenced: bool = False


Action = ToolCall | TextAnswer


class Decoding(BaseModel):
    model_config = ConfigDict(extra="forbid")

    temperature: float = Field(study.TEMPERATURE, ge=0.0, le=2.0)
    # None: not sent, the server's default applies (the veriharness protocol sends top_p only
    # when a run sets one, as the artifact did)
    top_p: float | None = Field(study.TOP_P, gt=0.0, le=1.0)
    # None: not sent, the server's own cap (BFCL's runner sends none)
    max_tokens: int | None = Field(study.MAX_TOKENS, ge=1)
    # passed to the server as `seed`; sample_seed of the key overrides it per episode
    seed: int | None = None
    # False: the request says `"stream": false` (the artifact's requests did); None: not sent.
    # Set by a protocol through Opening.decoding, never by a run spec; excluded from dumps so
    # that run identities stay as they were
    stream: Literal[False] | None = Field(None, exclude=True)
    # decoding constrained by the server (`--constrain`): none, any JSON, or the tools' JSON
    # Schema. Set per episode from its key (the run's identity holds it), so excluded from dumps
    constrain: Literal["none", "json", "schema"] = Field("none", exclude=True)
    # the request's `tool_choice` when tools are offered (None: not sent, as BFCL's runner) and its
    # `store` (BFCL's runner sends false; None: not sent). Set by a protocol, excluded from dumps
    tool_choice: Literal["auto"] | None = Field("auto", exclude=True)
    store: Literal[False] | None = Field(None, exclude=True)
    # whose reading of an answer: `harness` (calls in the text parsed by --text-calls, arguments ""
    # read as {}, the assistant message rebuilt when resent) or `bfcl` (its FC handler's: native
    # calls only, arguments through json.loads, the server's message resent as it came)
    reading: Literal["harness", "bfcl"] = Field("harness", exclude=True)


class Condition(Protocol):
    """What an episode is played under, as environments and the loop read it; `conditions/`
    implements it (resolved once, when the spec loads, for the suite's feedback family and the
    run's feedback cut), so that nothing here names that package.

    feedback: the name of what it shows in its family (the veriharness protocol picks its variant
    by it); items/render: the feedback about one rejected call, as lines or one message; sets:
    what it sets in the environment (the output-contract arms shape backend faults); cut: the
    characters every rendered value is cut to; review_prompt: what a self-check arm asks before a
    call runs (None: the validator judges); record: what a record keeps of it beside its name.
    """

    @property
    def name(self) -> str: ...

    @property
    def feedback(self) -> str: ...

    @property
    def cut(self) -> int | None: ...

    def items(self, violation: Violation) -> list[str]: ...

    def sets(self, key: str) -> Any: ...

    def review_prompt(self) -> str | None: ...

    def record(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class EpisodeContext:
    """Everything one episode is played under, handed to `Suite.make` and to the loop.

    One explicit value instead of side channels: the budget the key chose (a count in the unit
    the env's Opening names), the decoding, the tool mode and the condition (None outside a run:
    listing a suite's tools, building a snapshot).
    """

    budget: int
    decoding: Decoding = field(default_factory=lambda: Decoding())
    tool_mode: Literal["native", "prompt"] = "prompt"
    condition: Condition | None = None

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ValueError(f"an episode's budget is at least 1, got {self.budget}")

    def sets(self, key: str) -> Any:
        """What the condition sets for the environment under `key` (None when it sets nothing)."""
        return None if self.condition is None else self.condition.sets(key)


class Accepted(BaseModel):
    """The environment took the action."""

    observation: str
    done: bool = False
    won: bool = False
    lost: bool = False
    # the tool list from the next call on, where the environment changes it (BFCL's miss_func
    # adds the functions it held back); None: the same as before. Not part of a record
    tools: list[ToolSpec] | None = Field(None, exclude=True)


Outcome = Accepted | Violation


# What an episode's budget counts. "model_calls": every call to the model, the review calls of
# the self-check arms included, so every arm is compared at the same cost. "tool_calls": every
# tool call handed to the environment, a rejected one included (TextWorld's step protocol).
# The key's budget is the limit, in the unit the env's Opening names; a record says how much of
# it the episode spent (`budget_spent`, `budget_unit`).
BudgetUnit = Literal["model_calls", "tool_calls"]


class Opening(BaseModel):
    """What `env.reset()` hands the loop.

    history: `full` keeps the conversation (step and tool protocols); `last` rebuilds every call
    from the opening messages plus feedback about the previous attempt only (the paper's plan
    protocol).
    accepts: which actions the environment reads. A turn with no tool call in an environment that
    does not accept text is a `no_action` Violation.
    """

    messages: list[dict[str, Any]]
    tools: list[ToolSpec] = Field(default_factory=list)
    history: Literal["full", "last"] = "full"
    accepts: frozenset[Literal["tool", "text"]] = frozenset({"tool"})
    # how much of the previous answer a `last`-history retry quotes back (paper: 240 chars)
    echo_chars: int | None = study.CUT
    # what the budget counts (BudgetUnit): model calls (plan protocol, tool tasks) or tool calls
    # (step protocol: a turn with three game commands spends three)
    budget_unit: BudgetUnit = "model_calls"
    # who writes a `last`-history retry: the loop (the opening, the quoted answer and the
    # condition's rendering of the Violation) or the environment, a `RetryWriter`, for a protocol
    # whose retry prompt is itself a stimulus (veriharness: the task context again with the
    # condition's feedback lines shown twice)
    retry: Literal["loop", "env"] = "loop"
    # the decoding this protocol's requests use when it is not the run's own (veriharness: the
    # artifact's request keys); None: the run's
    decoding: Decoding | None = None
    # the protocol's rule for an answer of several calls: `until_rejected` stops at the first
    # rejection (the rest are answered "Not executed"); `all` runs every call in order whatever
    # the one before returned, as BFCL's `execute_multi_turn_func_call` does
    answer_calls: Literal["until_rejected", "all"] = "until_rejected"
    # answers with calls one part of the task (Segmented: a BFCL turn) may take; one more and the
    # protocol ends the episode, lost (BFCL's force-quit after MAXIMUM_STEP_LIMIT = 20 steps).
    # None: no limit but the budget
    step_limit: int | None = None
    # who describes the tools and reads the calls out of a text answer: the backend (prompt mode: our
    # tools block and parser, harness.serving.backends) or the environment, whose opening messages
    # already hold its protocol's own tool prompt (BFCL's prompting handler's system prompt): the
    # backend is then offered no tools, and the env, a `CallReader`, decodes the text and writes the
    # message that brings an answer's results back
    tool_prompt: Literal["backend", "env"] = "backend"


@runtime_checkable
class Env(Protocol):
    """One task instance. `reset` starts it; `submit` takes one action; `close` frees resources.

    `record_extra()`: per-episode facts the runner stores in the record's `extra` (whether
    answers were fenced, invented values, fault outcomes; {} when there are none).
    `reference()` (valid after `reset()`): the task's known solution, one action per model turn,
    that wins the episode when played in order (the reference agents of `harness.agents` play
    it; no model ever sees it).

    `blocking` says whether its calls block: True (a game engine, a replay that takes
    milliseconds) and the loop calls it in a worker thread; False (microseconds of Python) and it
    runs on the event loop, where a thread hop would cost more than the call. An environment that
    does not say is called in a thread.
    """

    blocking: bool

    def reset(self) -> Opening: ...

    def submit(self, action: Action) -> Outcome: ...

    def record_extra(self) -> dict[str, Any]: ...

    def reference(self) -> list[Action]: ...

    def close(self) -> None: ...


@runtime_checkable
class RetryWriter(Protocol):
    """An env whose Opening says `retry="env"`: after a rejected attempt it writes the whole next
    request itself, around the condition's feedback lines (`Condition.items`)."""

    def retry_messages(self, feedback: list[str]) -> list[dict[str, Any]]: ...


@runtime_checkable
class CallReader(Protocol):
    """An env whose Opening says `tool_prompt="env"`. `read_calls(text)`: the calls its protocol's
    decoder reads in an answer's text ([]: an answer in text) and why some could not be read (the
    turn's parse error, or None); `results_message(calls, results)`: the one message that brings
    back what each call of an answer was answered (its observation, or the condition's feedback)."""

    def read_calls(self, text: str) -> tuple[list[ToolCall], str | None]: ...

    def results_message(self, calls: list[ToolCall], results: list[str]) -> dict[str, Any]: ...


def call_reader(env: Env, opening: Opening) -> CallReader | None:
    """Who reads this episode's calls out of text, decided once at its start: the env, or None
    (the backend's parser, in prompt mode)."""
    if opening.tool_prompt == "backend":
        return None
    if not isinstance(env, CallReader):
        raise TypeError(f"{type(env).__name__} opens with tool_prompt='env' but reads no calls (read_calls)")
    return env


@runtime_checkable
class Segmented(Protocol):
    """An env whose task comes in parts judged one by one (BFCL: the user's turns). `segment()` is
    the part it is in now; `record_extra()` then holds `segments_solved`, a verdict per part ended.
    A fork from such an env is judged on the part its failure was in (harness.recording)."""

    def segment(self) -> int: ...


@runtime_checkable
class ForceQuits(Protocol):
    """An env whose protocol judges the episode its step limit ended (Opening.step_limit), where
    the loop would call it lost: `force_quit()` is the verdict (BFCL's evaluate sees a force-quit
    only as turns not reached: one in the last turn is judged like any end)."""

    def force_quit(self) -> Accepted: ...


def retry_writer(env: Env, opening: Opening) -> RetryWriter | None:
    """Who writes this episode's retries, decided once at its start: the env, or None (the loop)."""
    if opening.retry == "loop":
        return None
    if not isinstance(env, RetryWriter):
        raise TypeError(f"{type(env).__name__} opens with retry='env' but writes no retry_messages(feedback)")
    return env


class Task(BaseModel):
    """A task as a suite lists it. `params` is whatever the suite needs to rebuild the env."""

    suite: str
    task_id: str
    params: dict[str, Any] = Field(default_factory=dict)


class Suite(Protocol):
    """A named, seeded family of tasks. Its budget and description are its line in `envs.SUITES`.

    `options_model` validates the run spec's `env_options` when the spec loads (unknown keys and
    wrong types are errors there, not mid-run).
    """

    name: str
    options_model: type[BaseModel]
    # whether `make` blocks (compiles a game, starts an engine), as `Env.blocking`
    blocking: bool

    def tasks(self, options: BaseModel) -> list[Task]: ...

    def make(self, task: Task, options: BaseModel, ctx: EpisodeContext) -> Env: ...

    def feedback_family(self, options: BaseModel) -> str:
        """Whose renderers write the feedback under these options: "message" (the conditions'
        own, `conditions.feedback`) or a protocol's family ("veriharness"); the spec refuses, when
        it loads, a condition the family has no renderer for."""
        ...
