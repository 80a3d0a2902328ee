"""The one path from a rejected typed call to a Violation, and the before phase as field types."""

from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, ConfigDict, Field, model_validator

from envs.contract import Violation
from envs.tools.fields import PastDay, choice
from envs.validation import TypedTool, fail, normalised, normalised_on_day

TODAY = date(2026, 8, 23)


class Order(BaseModel):
    model_config = ConfigDict(extra="forbid")

    code: Annotated[str, normalised(lambda v: v.strip().upper() if isinstance(v, str) else v)] = Field(
        pattern=r"^[A-Z]{3}$"
    )
    day: Annotated[date, normalised_on_day(lambda v, today: today if v == "today" else v)] | None = None
    size: Annotated[Literal["s", "m", "l"], choice({"small": "s", "large": "l"})] = "m"
    count: int = Field(1, alias="n")

    @model_validator(mode="after")
    def _withdrawn(self) -> "Order":
        if self.code == "BAD":
            raise fail("bad_code", "this code is withdrawn", "code", self.code, ["ABC", "XYZ"])
        return self


@dataclass
class OrderTool(TypedTool):
    name: str = "order"
    model: type[BaseModel] = Order

    def allowed(self, field: str, arguments: dict[str, Any], context: dict[str, Any]) -> list[str]:
        return ["ABC", "XYZ"] if field == "code" else []


class GameLikeTool(OrderTool):
    wording = {"missing": "argument missing"}
    count_more = False
    quote_call_when_missing = False
    observed_chars = 5


def test_the_before_phase_runs_unless_the_contract_is_strict():
    ok = OrderTool().validate({"code": " abc ", "day": "today", "size": "Small"}, {"today": TODAY})
    assert isinstance(ok, Order) and (ok.code, ok.day, ok.size) == ("ABC", TODAY, "s")
    strict = OrderTool().validate({"code": " abc "}, {"today": TODAY, "normalize": False})
    assert isinstance(strict, Violation) and strict.code == "string_pattern_mismatch" and strict.observed == " abc "
    assert strict.location == "arguments.code" and strict.allowed == ["ABC", "XYZ"]


def test_a_day_needs_the_task_reference_date_never_the_clock():
    v = OrderTool().validate({"code": "abc", "day": "today"}, {})
    assert isinstance(v, Violation) and v.location == "arguments.day" and v.observed == "today"


def test_rule_failures_carry_their_own_location_observed_and_allowed():
    v = OrderTool().validate({"code": "bad"}, {})
    assert isinstance(v, Violation)
    assert (v.code, v.location, v.observed, v.allowed) == ("bad_code", "arguments.code", "BAD", ["ABC", "XYZ"])
    assert v.message == "order: code: this code is withdrawn" and v.tool == "order" and "Traceback" in v.raw


def test_listing_messages_never_name_the_alternatives():
    v = OrderTool().validate({"code": "abc", "size": "huge"}, {})
    assert v.code == "literal_error" and v.message == "order: size: value is not one of the permitted values"


def test_unknown_arguments_are_answered_with_the_names_that_exist_aliases_included():
    v = OrderTool().validate({"code": "abc", "colour": "red"}, {})
    assert v.code == "extra_forbidden" and v.allowed == ["code", "day", "size", "n"]


def test_the_tool_tasks_quote_the_call_for_a_missing_argument_and_count_the_rest():
    v = OrderTool().validate({"size": "huge", "colour": "red"}, {})
    assert v.code == "missing" and v.observed == {"size": "huge", "colour": "red"}
    assert v.message == "order: code: Field required (+2 more errors)"


def test_a_family_words_and_quotes_its_own_way_through_the_same_translator():
    v = GameLikeTool().validate({"size": "huge"}, {})
    assert v.code == "missing" and v.observed is None and v.message == "order: code: argument missing"
    long = GameLikeTool().validate({"code": "abcdefgh"}, {"normalize": False})
    assert long.observed == "abcde…"


@pytest.mark.parametrize("raw", ["вчера", "22 августа", "Aug 22", "22.08", "суббота"])
def test_past_day_reads_what_customers_type(raw):
    class Q(BaseModel):
        day: PastDay

    assert Q.model_validate({"day": raw}, context={"today": TODAY}).day == date(2026, 8, 22)
    assert Q.model_json_schema()["properties"]["day"] == {"format": "date", "title": "Day", "type": "string"}
