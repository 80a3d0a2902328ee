"""Compositions: one canonical spelling, the aliases as they always rendered, and every composition
shows exactly its parts, on real Violations of every suite."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from conditions import ALIASES, CONDITIONS, get_condition, resolve
from conditions.compose import FORMS, PARTS, CompositionError, parse
from conditions.feedback import FRAME, INVALID, RETRY, render
from envs import get_suite
from envs.contract import EpisodeContext, ToolCall, Violation
from envs.errors import UnknownName
from harness.agents.reader import plant, put
from tests.conditions.said import said

V = Violation(
    code="literal_error",
    location="arguments.reason",
    observed="fruad",
    allowed=["duplicate", "fraud", "not_received", "wrong_amount"],
    message="open_dispute: reason: value is not one of the permitted values",
    raw="Traceback (most recent call last):\n  ...\npydantic_core.ValidationError: 1 validation error",
)


def test_a_composition_has_one_canonical_spelling():
    assert parse("location+retry@json").spelled() == "retry+location@json"
    assert parse(" allowed=3 + code @prose").spelled() == "code+allowed=3@prose"
    assert parse("frame+retry+invalid+message+traceback+code+location+observed+allowed@problem").parts == PARTS


@pytest.mark.parametrize(
    "spelling, kind",
    [
        ("retry+loc@json", UnknownName),
        ("retry@xml", UnknownName),
        ("retry+retry@json", CompositionError),
        ("allowed=0@json", CompositionError),
        ("allowed=x@json", CompositionError),
        ("code=2@json", UnknownName),
        ("@json", UnknownName),
        ("retry+message", CompositionError),
    ],
)
def test_a_bad_spelling_names_the_bad_value_and_the_allowed_ones(spelling, kind):
    with pytest.raises(kind) as err:
        parse(spelling)
    if kind is UnknownName:
        assert "allowed:" in str(err.value)


# what the six renderers wrote before they were compositions, byte for byte
BEFORE = {
    "none": "The call was invalid. Try again.",
    "raw": f"{RETRY}\nValidator: open_dispute: reason: value is not one of the permitted values",
    "traceback": f"{RETRY}\n{V.raw}",
    "loc_obs": f'{RETRY}\n{{"error": "literal_error", "location": "arguments.reason", "observed": "fruad"}}',
    "allowed_prose": f'{RETRY}\nThe error was "literal_error" at "arguments.reason": you sent "fruad", which is not '
    'accepted. The allowed values are: "duplicate", "fraud", "not_received", "wrong_amount".',
    "allowed_json": f'{RETRY}\n{{"error": "literal_error", "location": "arguments.reason", "observed": "fruad", '
    '"allowed": ["duplicate", "fraud", "not_received", "wrong_amount"]}',
}


@pytest.mark.parametrize("alias", list(ALIASES))
def test_each_alias_renders_as_before_and_as_its_composition(alias):
    assert said(alias, V) == BEFORE[alias]
    assert said(ALIASES[alias], V) == BEFORE[alias]
    assert get_condition(alias).record()["composition"] == ALIASES[alias]


def test_the_problem_form_is_an_rfc_9457_problem_with_invalid_params():
    text = said("retry+message+code+location+observed+allowed@problem", V)
    first, body = text.split("\n")
    problem = json.loads(body)
    assert first == RETRY
    assert problem["status"] == 422 and problem["type"] == "urn:repair-harness:violation:literal_error"
    assert problem["title"] and problem["detail"] == V.message
    (entry,) = problem["invalid-params"]
    assert entry["name"] == V.location and entry["reason"] and entry["observed"] == "fruad"
    assert entry["allowed"] == V.allowed
    # without code the problem type is RFC 9457's default, without location the entry has no name
    bare = json.loads(said("observed@problem", V))
    assert bare["type"] == "about:blank" and "name" not in bare["invalid-params"][0] and "detail" not in bare


def test_allowed_k_shows_the_first_k_in_the_environments_order():
    assert json.loads(said("allowed=2@json", V)) == {"allowed": ["duplicate", "fraud"]}
    assert said("frame+invalid@prose", V) == f"{FRAME}\n{INVALID}"


def test_the_veriharness_family_plays_the_papers_four_and_refuses_the_rest():
    assert resolve("retry+message@prose", "veriharness").feedback == "raw"
    with pytest.raises(ValueError) as err:
        resolve("retry+location@json", "veriharness")
    assert "allowed: raw, loc_obs, allowed_prose, allowed_json" in str(err.value)


# ---- every composition shows exactly its parts -------------------------------------------------


def _violations() -> list[tuple[str, Violation]]:
    """Real Violations: each suite's reference with the reader's seeded mistake, and an unknown tool."""
    suites = ["bank-disputes", "tools-bank", "tools-travel", "tools-calendar", "paper-textworld"]
    try:
        import bfcl_eval  # noqa: F401  (the suites read the installed package)

        suites.append("bfcl-base")
    except ImportError:
        pass
    found = []
    for name in suites:
        suite = get_suite(name)
        options = suite.options_model()
        for task in suite.tasks(options)[:3]:
            env = suite.make(task, options, EpisodeContext(budget=8))
            env.reset()
            reference = env.reference()
            mistake = plant(reference, random.Random(task.task_id))
            if mistake is not None:
                for action in reference[: mistake.index]:
                    env.submit(action)
                outcome = env.submit(put(reference[mistake.index], mistake, mistake.sent))
                if isinstance(outcome, Violation):
                    found.append((name, outcome))
            outcome = env.submit(ToolCall(name="no_such_tool", arguments={}))
            if isinstance(outcome, Violation):
                found.append((name, outcome))
            env.close()
    assert {n for n, _ in found} == set(suites), "every suite gave a Violation"
    return found


VIOLATIONS = _violations()
# each part alone, each pair, all of them; allowed=2 beside allowed
SETS = [
    *[(p,) for p in PARTS],
    *itertools.combinations(PARTS, 2),
    PARTS,
    ("retry", "location", "allowed=2"),
]
COMPOSITIONS = ["+".join(s) + "@" + form for s in SETS for form in FORMS]


@pytest.mark.parametrize("spelling", COMPOSITIONS)
def test_a_composition_shows_exactly_its_parts_on_every_suite(spelling):
    c = parse(spelling)
    for suite, v in VIOLATIONS:
        text = render(c, v, None)
        for line, part in ((FRAME, "frame"), (RETRY, "retry"), (INVALID, "invalid")):
            assert (line in text.split("\n")) == c.has(part), (suite, spelling, part)
        changes = {
            "code": {"code": "SENTINEL_CODE"},
            "location": {"location": "SENTINEL.location"},
            "observed": {"observed": "SENTINEL observed"},
            "allowed": {"allowed": ["SENTINEL allowed"]},
            "message": {"message": "SENTINEL message"},
            "traceback": {"raw": "SENTINEL traceback"},
        }
        for part, change in changes.items():
            after = render(c, v.model_copy(update=change), None)
            # the traceback part shows the message when there is no raw text
            shows = c.has(part) or (part == "message" and c.has("traceback") and not v.raw)
            assert ("SENTINEL" in after) == shows, (suite, spelling, part, after)
            if not shows:
                assert after == text, (suite, spelling, part)


def test_every_named_condition_is_a_composition_or_a_renderer():
    for name, condition in CONDITIONS.items():
        assert condition.record()["composition"] == condition.shows.spelled(), name
