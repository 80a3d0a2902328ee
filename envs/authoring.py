"""Write a tool suite of your own: tools as pydantic input models with a backend function each, a
seeded task generator, a success check on the state. What you build plays under every condition
and decoding arm of the harness, through its one episode loop.

    suite = ToolSuite(
        name="shop-refunds",
        tools=[ToolDef("refund", "Refund an order.", RefundInput, run=refund, allowed={"order_id": order_ids})],
        state=lambda seed: Shop.seeded(seed),              # a fresh backend state for a task
        task=lambda seed, shop: TaskDraft(utterance=..., gold=[ToolCall(name="refund", arguments={...})]),
        success=lambda shop, draft: shop.refunded == draft.facts["order"],
        system="You are a shop's support agent. Act only through the tools.",
    )
    register(suite, budget=6, description="Refunds behind a pydantic contract")

The input contract is the model's: `before` validators normalise (off under `--env contract=strict`:
the context's `normalize` is False), field types and `extra="forbid"` are the core, `after`
validators the cross-field rules; `envs.validation.fail(...)` states a rule's location, observed and
allowed values. A call the model rejects is a `Violation` (never text), whose allowed values come
from the rule, else from `ToolDef.allowed` (the state), else from the field's Literal or Enum members.
A backend may refuse a valid call on the state (`Refused`: a Violation too) or fail as a service
does (`ServiceFault`, a timeout or a lost connection): a fault is an answer through the output
contract, shaped by `--env fault_shape=raw|problem` or the `fault_raw` / `fault_problem` arms.

An episode ends when the success check holds after a call (`ends="success"`, the default: won), at
the agent's text answer (`ends="answer"`: won if the check holds then), or at the first accepted call
(`ends="call"`: one call, right or wrong, as bank-disputes).
"""

from __future__ import annotations

import enum
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from envs import register_suite
from envs.contract import (
    Accepted,
    Action,
    EpisodeContext,
    Opening,
    Outcome,
    Task,
    TextAnswer,
    ToolCall,
    ToolSpec,
    Violation,
)
from envs.errors import SuiteBug, UserError
from envs.success import checked
from envs.tools.output import FaultShape, ProblemDetails, ToolOutput
from envs.tools.tooling import schema_view
from envs.validation import TypedTool

S = TypeVar("S")


class Refused(Exception):
    """A backend's refusal of a call that passed the input contract, judged on the state (an
    order that does not exist, a refund already made): the agent gets a Violation."""

    def __init__(self, code: str, message: str, field: str | None = None, observed: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.field, self.observed = code, message, field, observed


class ServiceFault(Exception):
    """The service behind a tool failed (what a transport raises: 429, 503, a timeout). Not the
    agent's mistake: it reaches the agent as the output contract's error, raw or as RFC 9457."""

    def __init__(
        self,
        status: int,
        title: str,
        detail: str = "",
        *,
        retryable: bool = True,
        retry_after: int | None = None,
        owner_action_required: bool = False,
    ) -> None:
        super().__init__(f"{status} {title}" + (f": {detail}" if detail else ""))
        self.problem = ProblemDetails(
            type=f"about:blank#{status}",
            title=title,
            status=status,
            detail=detail or title,
            retryable=retryable,
            retry_after=retry_after,
            owner_action_required=owner_action_required,
        )


@dataclass(frozen=True)
class ToolDef(Generic[S]):
    """One tool: its name and description as the model sees them, its input model, its backend
    (`run(state, validated_input) -> JSON-able data`), and where its fields' allowed values come
    from on the state (field name -> function of the state)."""

    name: str
    description: str
    input: type[BaseModel]
    run: Callable[[S, Any], Any]
    allowed: Mapping[str, Callable[[S], list[str]]] = field(default_factory=dict)


@dataclass(frozen=True)
class TaskDraft:
    """One task, drawn from a seed: what the user says, the calls that solve it (in order), and
    whatever the success check needs to know (`facts`)."""

    utterance: str
    gold: Sequence[ToolCall]
    facts: Mapping[str, Any] = field(default_factory=dict)


class AuthoredOptions(BaseModel):
    """The `--env` options every authored suite has."""

    model_config = ConfigDict(extra="forbid")

    n_tasks: int = Field(20, ge=1, le=100_000)
    # normalizing: the before phase repairs notation; strict: it is off, the same input is rejected
    contract: Literal["normalizing", "strict"] = "normalizing"


class FaultOptions(AuthoredOptions):
    """A suite whose backend raises `ServiceFault`s also says how they reach the model (the
    `fault_raw` / `fault_problem` arms set it)."""

    fault_shape: FaultShape = "problem"


def field_members(model: type[BaseModel], name: str) -> list[str]:
    """The values a field's type allows when it names them (Literal members, Enum values)."""
    info = model.model_fields.get(name)
    if info is None:
        return []
    members: list[str] = []
    pending: list[Any] = [info.annotation]
    while pending:
        kind = pending.pop(0)
        if typing.get_origin(kind) is Literal:
            members += [str(v) for v in typing.get_args(kind)]
        elif isinstance(kind, type) and issubclass(kind, enum.Enum):
            members += [str(m.value) for m in kind]
        else:
            pending += [a for a in typing.get_args(kind) if a is not type(None)]
    return members


class _Tool(TypedTool, Generic[S]):
    """A ToolDef bound to one episode's state: the harness's one path from a rejected call to a Violation."""

    def __init__(self, spec: ToolDef[S], state: S) -> None:
        self.spec, self.state = spec, state
        self.name, self.model = spec.name, spec.input

    def allowed(self, field: str, arguments: dict[str, Any], context: dict[str, Any]) -> list[str]:
        source = self.spec.allowed.get(field)
        return [str(v) for v in source(self.state)] if source is not None else field_members(self.spec.input, field)


class _Env(Generic[S]):
    blocking = False  # microseconds of Python per call

    def __init__(self, suite: ToolSuite[S], task: Task, options: AuthoredOptions, fault_shape: FaultShape) -> None:
        self.suite, self.seed, self.options, self.fault_shape = suite, int(task.params["seed"]), options, fault_shape
        self.faults = 0

    def reset(self) -> Opening:
        self.state, self.draft = self.suite.draw(self.seed)
        self.tools = {t.name: _Tool(t, self.state) for t in self.suite.tools}
        system = self.suite.system if isinstance(self.suite.system, str) else self.suite.system(self.state)
        return Opening(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": self.draft.utterance}],
            tools=[self.suite.tool_spec(t) for t in self.suite.tools],
            accepts=frozenset({"tool", "text"}) if self.suite.ends == "answer" else frozenset({"tool"}),
        )

    def submit(self, action: Action) -> Outcome:
        if isinstance(action, TextAnswer):
            if self.suite.ends != "answer":  # the loop says so before it asks; a direct caller hears it here
                return Violation.no_action(action.text)
            won = checked(self.suite, self.state, self.draft)
            return Accepted(observation="The conversation is over.", done=True, won=won, lost=not won)
        tool = self.tools.get(action.name)
        if tool is None:
            return Violation.unknown_tool(action.name, list(self.tools))
        context = {**self.suite.context(self.state), "normalize": self.options.contract == "normalizing"}
        inp = tool.validate(action.arguments, context)
        if isinstance(inp, Violation):
            return inp
        try:
            data = _run(tool, self.state, inp)
        except Refused as exc:
            where = exc.field
            allowed = tool.allowed(where, action.arguments, context) if where else []
            return Violation.from_exception(
                exc,
                code=exc.code,
                message=exc.message,
                location=f"arguments.{where}" if where else None,
                observed=exc.observed if exc.observed is not None else action.arguments.get(where or ""),
                allowed=allowed,
                tool=tool.name,
            )
        except (ServiceFault, TimeoutError, ConnectionError) as exc:  # the output contract: an answer
            self.faults += 1
            return Accepted(observation=self._fault(exc))
        observation = ToolOutput(status="ok", data=data).text()
        if self.suite.ends == "answer":
            return Accepted(observation=observation)  # the agent says when it is done
        won = checked(self.suite, self.state, self.draft)
        if won or self.suite.ends == "call":
            return Accepted(observation=observation, done=True, won=won, lost=not won)
        return Accepted(observation=observation)

    def _fault(self, exc: Exception) -> str:
        if self.fault_shape == "raw":
            return ToolOutput(status="error", error=f"{type(exc).__name__}: {exc}").text()
        problem = (
            exc.problem if isinstance(exc, ServiceFault) else ServiceFault(503, "The service did not answer").problem
        )
        return ToolOutput(status="error", error=problem).text()

    def reference(self) -> list[Action]:
        _, draft = self.suite.draw(self.seed)  # a fresh draw: the episode's own state is left alone
        calls: list[Action] = [c.model_copy(update={"id": c.id or f"call_{i}"}) for i, c in enumerate(draft.gold)]
        return calls + ([TextAnswer(text="Done.")] if self.suite.ends == "answer" else [])

    def record_extra(self) -> dict[str, Any]:
        return {"service_faults": self.faults} if self.faults else {}

    def close(self) -> None:
        pass


@dataclass
class ToolSuite(Generic[S]):
    """A suite of seeded tool tasks (the `envs.contract.Suite` protocol); see the module's text."""

    name: str
    tools: Sequence[ToolDef[S]]
    state: Callable[[int], S]
    task: Callable[[int, S], TaskDraft]
    success: Callable[[S, TaskDraft], bool]
    system: str | Callable[[S], str]
    ends: Literal["success", "answer", "call"] = "success"
    seed_base: int = 0
    task_prefix: str | None = None  # task ids are PREFIX-0000, ...; the suite's name by default
    n_tasks: int = 20
    # the validation context beyond the `normalize` switch: what `after` rules read of the state
    context: Callable[[S], dict[str, Any]] = lambda _state: {}
    # the backend may raise ServiceFault: the suite takes `--env fault_shape` and the fault arms
    faults: bool = False
    blocking: bool = False
    options_model: type[BaseModel] = field(init=False)

    def __post_init__(self) -> None:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names) or not names:
            raise ValueError(f"suite {self.name!r}: its tools need distinct names, got {names}")
        # the options model with this suite's task count as its default
        self.options_model = create_model(
            "Options",
            __base__=FaultOptions if self.faults else AuthoredOptions,
            n_tasks=(int, Field(self.n_tasks, ge=1, le=100_000)),
        )

    def draw(self, seed: int) -> tuple[S, TaskDraft]:
        try:
            state = self.state(seed)
            return state, self.task(seed, state)
        except Exception as exc:  # the suite's own code: a harness error naming its file and line
            raise SuiteBug(f"the draw of task {seed}", exc) from exc

    def tool_spec(self, tool: ToolDef[S]) -> ToolSpec:
        """The tool as the model sees it: its input model's JSON Schema, Literal members kept."""
        return ToolSpec(name=tool.name, description=tool.description, parameters=schema_view(tool.input, "enum"))

    def tasks(self, options: BaseModel) -> list[Task]:
        assert isinstance(options, AuthoredOptions)
        prefix = self.task_prefix or self.name
        return [
            Task(suite=self.name, task_id=f"{prefix}-{i:04d}", params={"seed": self.seed_base + i})
            for i in range(options.n_tasks)
        ]

    def make(self, task: Task, options: BaseModel, ctx: EpisodeContext) -> _Env[S]:
        assert isinstance(options, AuthoredOptions)
        return _Env(self, task, options, ctx.sets("fault_shape") or getattr(options, "fault_shape", "problem"))

    def feedback_family(self, options: BaseModel) -> str:
        return "message"


def _run(tool: Any, state: Any, inp: BaseModel) -> Any:
    """A tool's backend; a refusal or a service fault is an answer, anything else its bug."""
    try:
        return tool.spec.run(state, inp)
    except (Refused, ServiceFault, TimeoutError, ConnectionError):
        raise
    except Exception as exc:
        raise SuiteBug(f"{tool.name}'s backend", exc) from exc


class SuiteDefinitionError(UserError):
    """A suite written with a wrong type where the harness reads it: one line naming the field."""


def _check_tools(suite: ToolSuite[Any]) -> None:
    where = f"suite {suite.name!r}"
    for i, tool in enumerate(suite.tools):
        if not isinstance(tool, ToolDef):
            raise SuiteDefinitionError(
                f"{where}: tools[{i}] is a {type(tool).__name__}; it must be an envs.authoring.ToolDef"
            )
        at = f"{where}: ToolDef {tool.name!r}"
        if not (isinstance(tool.input, type) and issubclass(tool.input, BaseModel)):
            raise SuiteDefinitionError(f"{at}: input is {tool.input!r}; it must be a pydantic BaseModel subclass")
        if not callable(tool.run):
            raise SuiteDefinitionError(
                f"{at}: run is a {type(tool.run).__name__}; it must be a function (state, input)"
            )
        for name, source in tool.allowed.items():
            if name not in tool.input.model_fields:
                raise SuiteDefinitionError(
                    f"{at}: allowed names the field {name!r}, which {tool.input.__name__} does not have "
                    f"(its fields: {', '.join(tool.input.model_fields)})"
                )
            if not callable(source):
                raise SuiteDefinitionError(f"{at}: allowed[{name!r}] must be a function of the state")


def _check_draft(suite: ToolSuite[Any]) -> None:
    """The first task, drawn as a run draws it: the types the harness reads from a TaskDraft."""
    where = f"suite {suite.name!r}: task(seed, state)"
    _, draft = suite.draw(suite.seed_base)
    if not isinstance(draft, TaskDraft):
        raise SuiteDefinitionError(
            f"{where} returned a {type(draft).__name__}; it must return an envs.authoring.TaskDraft"
        )
    if not isinstance(draft.utterance, str):
        raise SuiteDefinitionError(
            f"{where}: TaskDraft.utterance is a {type(draft.utterance).__name__}; it must be a str"
        )
    if isinstance(draft.gold, (str, bytes)) or not isinstance(draft.gold, Sequence):
        raise SuiteDefinitionError(
            f"{where}: TaskDraft.gold is a {type(draft.gold).__name__}; it must be a list of ToolCall"
        )
    names = [t.name for t in suite.tools]
    for j, call in enumerate(draft.gold):
        if not isinstance(call, ToolCall):
            raise SuiteDefinitionError(
                f"{where}: TaskDraft.gold[{j}] is a {type(call).__name__}; it must be an envs.contract.ToolCall "
                "(ToolCall(name=..., arguments={...}))"
            )
        if call.name not in names:
            raise SuiteDefinitionError(
                f"{where}: TaskDraft.gold[{j}] calls {call.name!r}; the suite's tools are {names}"
            )
    if not isinstance(draft.facts, Mapping):
        raise SuiteDefinitionError(f"{where}: TaskDraft.facts is a {type(draft.facts).__name__}; it must be a dict")


def register(suite: ToolSuite[Any], budget: int, description: str) -> ToolSuite[Any]:
    """Register the suite under its name (`repair-harness suites` lists it; `run --suite` plays it).
    The definition is checked first: a wrong type where the harness reads it (a tool that is no
    ToolDef, gold calls given as dicts) is one line naming the field, here rather than in a run."""
    if not isinstance(suite, ToolSuite):
        raise SuiteDefinitionError(f"register() takes an envs.authoring.ToolSuite, got a {type(suite).__name__}")
    _check_tools(suite)
    _check_draft(suite)
    register_suite(suite.name, suite, budget, description)
    return suite
