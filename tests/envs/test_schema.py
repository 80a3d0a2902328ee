"""What the model sees does not depend on pydantic's release: the schema generator is ours."""

import json
from decimal import Decimal
from pathlib import Path

from pydantic import BaseModel, Field
from pydantic.json_schema import GenerateJsonSchema

from envs import get_suite
from envs.contract import EpisodeContext
from envs.schema import model_schema
from envs.tools.bank.contract import OpenDisputeInput

PINNED = Path(__file__).parents[1] / "data" / "schemas" / "bank-disputes.open_dispute.json"


class Amounts(BaseModel):
    amount: Decimal = Field(gt=0, le=1_000_000)
    refund: Decimal | None = Field(None, ge=0)


def _pattern_everywhere(self, schema):
    """What pydantic 2.13 did: a Decimal's string branch carries a `pattern`."""
    out = ORIGINAL(self, schema)
    for branch in out.get("anyOf", [out]):
        if branch.get("type") == "string":
            branch["pattern"] = r"^(?!^[-+.]*$)[+-]?0*\d*\.?\d*$"
    return out


ORIGINAL = GenerateJsonSchema.decimal_schema


def tool_spec():
    """The one tool of bank-disputes, as its environment hands it to the model."""
    suite = get_suite("bank-disputes")
    options = suite.options_model()
    return suite.make(suite.tasks(options)[0], options, EpisodeContext(budget=4)).reset().tools[0]


def test_the_bank_tool_schema_is_pinned_to_its_exact_text():
    text = json.dumps(tool_spec().openai(), ensure_ascii=False, indent=2, sort_keys=True) + "\n"
    assert text == PINNED.read_text(encoding="utf-8")


def test_decimal_fields_keep_our_form_when_pydantic_adds_a_pattern(monkeypatch):
    before = model_schema(Amounts)
    assert before["properties"]["amount"] == {
        "anyOf": [{"type": "number", "exclusiveMinimum": 0.0, "maximum": 1_000_000.0}, {"type": "string"}],
        "title": "Amount",
    }
    assert before["properties"]["refund"]["anyOf"] == [
        {"type": "number", "minimum": 0.0},
        {"type": "string"},
        {"type": "null"},
    ]

    monkeypatch.setattr(GenerateJsonSchema, "decimal_schema", _pattern_everywhere)
    assert "pattern" in json.dumps(
        Amounts.model_json_schema()
    )  # the simulated release does change pydantic's own output
    assert model_schema(Amounts) == before
    assert "pattern" not in json.dumps(model_schema(OpenDisputeInput)["properties"]["amount"])
    assert "pattern" in json.dumps(OpenDisputeInput.model_json_schema()["properties"]["amount"])
