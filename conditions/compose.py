"""A condition's feedback as a composition: `PART+PART+...@FORM`.

The parts say what the agent is shown about a rejected call; the form says how it is written:

- `frame`: one line saying the text is the validator's feedback, not the user's;
- `retry`: the generic retry line; `invalid`: the floor's "invalid, try again";
- `message`: the validator's own short message; `traceback`: what an unguarded tool leaks;
- `code`: the violation's code; `location`: where it is; `observed`: the value sent;
- `allowed`: every allowed value; `allowed=K`: the first K, in the order the environment gives them.

Forms: `prose`, `json` (keyed JSON) and `problem` (an RFC 9457 problem details object). A
composition has one canonical spelling (parts in the order above), so two spellings of one
composition are one condition (`retry+message@prose` and `message+retry@prose` both read back as
the first). Parsing is the one check of a spelling: an unknown part or form is an `UnknownName`.
"""

from __future__ import annotations

from dataclasses import dataclass

from envs.errors import UnknownName, UserError

# the canonical order of the parts; `allowed=K` takes the place of `allowed`
PARTS = ("frame", "retry", "invalid", "message", "traceback", "code", "location", "observed", "allowed")
FORMS = ("prose", "json", "problem")


class CompositionError(UserError):
    """A spelling that names no composition (a repeated part, no part, a bad K)."""


@dataclass(frozen=True)
class Composition:
    parts: tuple[str, ...]  # canonical order, `allowed` included when `allowed=K` is
    form: str
    # `allowed=K`: how many allowed values are shown (None: all of them, or no `allowed` part)
    k_allowed: int | None = None

    def has(self, part: str) -> bool:
        return part in self.parts

    def spelled(self) -> str:
        """The canonical spelling."""
        names = [
            f"allowed={self.k_allowed}" if p == "allowed" and self.k_allowed is not None else p for p in self.parts
        ]
        return "+".join(names) + "@" + self.form

    def __str__(self) -> str:
        return self.spelled()


def is_composition(text: str) -> bool:
    """Whether a condition name is spelled as a composition (it names a form)."""
    return "@" in text


def parse(text: str) -> Composition:
    """`PART+PART+...@FORM` as a composition; the errors name the bad value and the allowed ones."""
    head, sep, form = text.strip().rpartition("@")
    if not sep:
        raise CompositionError(f"{text!r} is not a composition: write PART+PART+...@FORM, forms {', '.join(FORMS)}")
    if form not in FORMS:
        raise UnknownName("feedback form", form, list(FORMS))
    seen: dict[str, str] = {}
    k: int | None = None
    for raw in head.split("+"):
        token = raw.strip()
        name, eq, value = token.partition("=")
        if name not in PARTS or (eq and name != "allowed"):
            raise UnknownName("feedback part", token, [*PARTS, "allowed=K"])
        if name in seen:
            raise CompositionError(f"{text!r} names the part {name!r} twice ({seen[name]} and {token})")
        if eq:
            if not value.isdigit() or int(value) < 1:
                raise CompositionError(f"{text!r}: allowed=K needs a whole number K >= 1, got {value!r}")
            k = int(value)
        seen[name] = token
    return Composition(tuple(p for p in PARTS if p in seen), form, k)
