"""harness.spec: a grid names each axis value once, and names something on every axis."""

import pytest

from harness.spec import SpecError, build_spec


def _spec(**values):
    return build_spec({"suite": "bank-disputes", "models": ["agent:reader"], "conditions": ["raw"], **values})


def test_a_value_named_twice_is_played_once():
    spec = _spec(
        conditions=["raw", "allowed_json", "raw"],
        models=["agent:reader", "agent:gold", "agent:reader"],
        budgets=[4, 2, 4],
        sample_seeds=[0, 1, 1],
        constrain=["none", "none"],
    )
    assert spec.conditions == ["raw", "allowed_json"] and spec.models == ["agent:reader", "agent:gold"]
    assert (spec.budgets, spec.sample_seeds, spec.constrain) == ([4, 2], [0, 1], ["none"])


def test_two_names_of_one_condition_are_refused_naming_both():
    with pytest.raises(SpecError, match="'raw' and 'retry\\+message@prose' are the same condition"):
        _spec(conditions=["raw", "retry+message@prose"])
    with pytest.raises(SpecError, match="same condition"):
        _spec(conditions=["retry+location@json", "location+retry@json"])


@pytest.mark.parametrize("field", ["budgets", "sample_seeds", "constrain", "conditions", "models"])
def test_an_empty_axis_is_refused(field):
    with pytest.raises(SpecError, match=f"{field}"):
        _spec(**{field: []})
