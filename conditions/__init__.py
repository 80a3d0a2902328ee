"""Conditions: what the agent is told after a failure, and who judges.

A condition's feedback is a composition of parts in a form (`conditions.compose`), or a renderer
of a plugin's own. The named conditions live in one registry (`CONDITIONS`): the paper's four and
the floor are aliases of compositions, the self-check arms add an arbiter, the fault arms an
environment setting. Any other composition is named by its spelling (`retry+location@json`).

A condition takes three forms on its way to a message: its name (a string: a registered name,
or a composition's spelling), what the name means (`ConditionDef`: the registry's value, or a
composition parsed from its spelling; it renders nothing), and the condition resolved once per
run, for the feedback family of the suite it plays and the run's feedback cut (`resolve` ->
`Condition`, which `envs.contract.Condition` types for environments and the loop: its feedback
lines (`items`), what it sets in the environment (`sets`), who reviews (`review_prompt`) and
what a record keeps of it (`record`)). The family decides what it can render: the message family
any composition; a protocol's own family, as veriharness, only what it has lines for.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from conditions.arbiters import ARBITERS, Arbiter, review_prompt
from conditions.compose import FORMS, PARTS, Composition, is_composition, parse
from conditions.feedback import INVALID, RETRY, render
from envs import study
from envs.errors import UnknownName, UserError
from envs.registry import Registry

if TYPE_CHECKING:
    # the contract's pydantic models cost a third of `repair-harness conditions`' start-up; a
    # condition only ever receives a Violation, it never builds one
    from envs.contract import Violation

ItemRenderer = Callable[["Violation", "int | None"], list[str]]


@dataclass(frozen=True)
class Renderer:
    """A feedback of a plugin's own: its function from a Violation (and the cut) to the message."""

    name: str
    function: Callable[[Violation, int | None], str]

    def spelled(self) -> str:
        return f"renderer:{self.name}"


Feedback = Composition | Renderer


@dataclass(frozen=True)
class Family:
    """Whose renderers write a suite's feedback. `find` gives, for a feedback it can render, the
    name it plays under and its renderer (None: it cannot); `renders` says what it can, for the
    message that refuses the rest."""

    name: str
    find: Callable[[Feedback], tuple[str, ItemRenderer] | None]
    renders: str


def _message_family(feedback: Feedback) -> tuple[str, ItemRenderer]:
    if isinstance(feedback, Renderer):
        function = feedback.function
        return feedback.spelled(), lambda v, cut: [function(v, cut)]
    return feedback.spelled(), lambda v, cut: [render(feedback, v, cut)]


FAMILIES: Registry[Family] = Registry("feedback family")
FAMILIES.register("message", Family("message", _message_family, "every composition and plugin renderer"))
# the veriharness lines read TextWorld's gates: imported when a spec first plays that protocol
FAMILIES.register_lazy("veriharness", "conditions.veriharness:FAMILY")


@dataclass(frozen=True)
class ConditionDef:
    """What a condition's name means, as the registry holds it: what it shows (a composition or a
    plugin's renderer), who judges, the paper's name, what it sets in the environment. It renders
    nothing: `resolve` binds it to a suite's feedback family and the run's cut (`Condition`)."""

    name: str
    shows: Feedback
    arbiter: Arbiter = "validator"
    paper_name: str | None = None
    description: str = ""
    # suite options this condition sets (the output-contract arms shape the environment's faults)
    env: dict[str, Any] = field(default_factory=dict)

    def review_prompt(self) -> str | None:
        return review_prompt(self.arbiter)

    def record(self) -> dict[str, Any]:
        """What a record keeps beside the name the user wrote: the canonical composition (two
        spellings of one composition record the same), the arbiter, the paper's name, the
        environment settings. The cut and the tool mode are the run's (the record's `config`)."""
        return {
            "composition": self.shows.spelled(),
            "arbiter": self.arbiter,
            "paper_name": self.paper_name,
            "env": self.env,
        }


@dataclass(frozen=True)
class Condition:
    """A condition resolved for a suite's feedback family and the run's feedback cut: the value an
    episode is played under (`envs.contract.Condition`, the Protocol that environments and the
    loop read: they never import this package). Made by `resolve` only, once per run."""

    definition: ConditionDef
    # whose renderers write its feedback, and the name of what it shows there
    family: str
    feedback: str
    # every rendered value is cut to this many characters (the run's --feedback-cut; the paper: 240)
    cut: int | None
    lines: ItemRenderer = field(repr=False, compare=False)

    @property
    def name(self) -> str:
        return self.definition.name

    def items(self, violation: Violation) -> list[str]:
        """The feedback lines about one rejected call (one message in the message family)."""
        return self.lines(violation, self.cut)

    def review_prompt(self) -> str | None:
        return self.definition.review_prompt()

    def sets(self, key: str) -> Any:
        """What this condition sets in the environment under `key` (None when it sets nothing)."""
        return self.definition.env.get(key)

    def record(self) -> dict[str, Any]:
        return self.definition.record()


CONDITIONS: Registry[ConditionDef] = Registry("condition")


def register_condition(
    name: str,
    shows: str | Callable[[Violation, int | None], str],
    description: str,
    arbiter: Arbiter = "validator",
    env: dict[str, Any] | None = None,
    paper_name: str | None = None,
) -> ConditionDef:
    """Name a condition: a composition (`"retry+location@json"`) or a renderer of a Violation of
    one's own (a function `(violation, cut) -> message`), with who judges and what it sets."""
    if arbiter not in ARBITERS:
        raise UnknownName("arbiter", str(arbiter), list(ARBITERS))
    if is_composition(name):
        raise UserError(f"a condition's name cannot contain '@' ({name!r}): that spells a composition")
    feedback: Feedback = parse(shows) if isinstance(shows, str) else Renderer(name, shows)
    return CONDITIONS.register(name, ConditionDef(name, feedback, arbiter, paper_name, description, dict(env or {})))


# the paper's four and the floor, as compositions; they play exactly as they always did
ALIASES = {
    "none": "invalid@prose",
    "traceback": "retry+traceback@prose",
    "raw": "retry+message@prose",
    "loc_obs": "retry+code+location+observed@json",
    "allowed_prose": "retry+code+location+observed+allowed@prose",
    "allowed_json": "retry+code+location+observed+allowed@json",
}
_ALIAS_TEXT = {
    "none": "only 'invalid, try again' (floor)",
    "traceback": "the full Python traceback an unguarded tool leaks",
    "raw": "generic retry line + the validator's raw message",
    "loc_obs": "label, location, observed value as JSON; no alternatives",
    "allowed_prose": "location, observed, allowed values as prose",
    "allowed_json": "label, location, observed, allowed as JSON",
}
for _name, _spelled in ALIASES.items():
    register_condition(_name, _spelled, _ALIAS_TEXT[_name], paper_name=study.CONDITION_NAMES.get(_name))
register_condition(
    "self_check",
    ALIASES["none"],
    "the model reviews its own call before execution; no validator output",
    arbiter="self_check",
)
register_condition(
    "self_check_wait", ALIASES["none"], "as self_check, prompted by a bare 'Wait'", arbiter="self_check_wait"
)
register_condition(
    "fault_raw",
    ALIASES["allowed_json"],
    "backend faults reach the model as the exception's text",
    env={"fault_shape": "raw"},
)
register_condition(
    "fault_problem",
    ALIASES["allowed_json"],
    "backend faults reach the model as RFC 9457 problem details",
    env={"fault_shape": "problem"},
)


def _bfcl_native(violation: Violation, cut: int | None) -> str:
    """What BFCL's own harness tells a model about a failed call: its backend's text, as is (a
    dict's JSON, `Error during execution: ...`), with no line of ours around it."""
    text = violation.raw or violation.message
    return text if cut is None else text[:cut]


register_condition(
    "bfcl-native",
    _bfcl_native,
    "the feedback as BFCL's own harness gives it: the backend's text, nothing added (imported BFCL transcripts)",
)

COMPOSING = f"or a composition PART+PART+...@FORM (parts {', '.join(PARTS)}, allowed=K; forms {', '.join(FORMS)})"


def get_condition(name: str) -> ConditionDef:
    """What a name means: a named condition, or the composition it spells."""
    if name in CONDITIONS or not is_composition(name):
        if name not in CONDITIONS:
            raise UnknownName("condition", name, CONDITIONS.names(), listing=f"{', '.join(CONDITIONS)}; {COMPOSING}")
        return CONDITIONS.get(name)
    return ConditionDef(name, parse(name), description="a composition")


class UnplayableCondition(UserError):
    """A condition the suite's feedback family has no renderer for."""


def resolve(name: str, family_name: str, who: str = "this suite", cut: int | None = None) -> Condition:
    """The condition as it plays in a feedback family, its values cut to `cut` characters: the one
    check of what a protocol can play."""
    condition = get_condition(name)
    family = FAMILIES.get(family_name)
    found = family.find(condition.shows)
    if found is None:
        playable = [n for n, c in CONDITIONS.items() if not c.env and family.find(c.shows) is not None]
        raise UnplayableCondition(
            f"{who} cannot play condition {name!r} ({condition.shows.spelled()}): its {family_name} feedback "
            f"renders {family.renders} only; allowed: {', '.join(playable)}"
        )
    feedback, lines = found
    return Condition(condition, family_name, feedback, cut, lines)


PART_TEXT = {
    "frame": "one line: this is the validator's feedback on your previous call, not the user's",
    "retry": "the generic retry line: " + RETRY,
    "invalid": "the floor's line: " + INVALID,
    "message": "the validator's own short message (no alternatives in it)",
    "traceback": "the exception's traceback, as an unguarded tool leaks it",
    "code": "the violation's code (e.g. literal_error)",
    "location": "where the call went wrong (e.g. arguments.reason)",
    "observed": "the value that was sent",
    "allowed": "every allowed value; allowed=K: the first K, in the environment's order",
}
FORM_TEXT = {
    "prose": "sentences",
    "json": "one keyed JSON object",
    "problem": "an RFC 9457 problem details object (status 422, invalid-params with name and reason)",
}


def listing() -> dict[str, Any]:
    """What `repair-harness conditions` shows: the named conditions with their compositions and
    who registered them, the parts and the forms a composition is written with."""
    return {
        "conditions": [
            {
                "name": name,
                "composition": c.shows.spelled(),
                "arbiter": c.arbiter,
                "env": c.env,
                "paper_name": c.paper_name,
                "description": c.description,
                "source": CONDITIONS.source(name),
            }
            for name, c in CONDITIONS.items()
        ],
        "parts": [{"name": p, "shows": PART_TEXT[p]} for p in PARTS],
        "forms": [{"name": f, "shows": FORM_TEXT[f]} for f in FORMS],
    }
