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


def test_two_names_of_one_condition_play_once_under_the_first():
    assert _spec(conditions=["raw", "raw", "retry+message@prose", "loc_obs"]).conditions == ["raw", "loc_obs"]
    assert _spec(conditions=["retry+location@json", "location+retry@json"]).conditions == ["retry+location@json"]


@pytest.mark.parametrize("field", ["budgets", "sample_seeds", "constrain", "conditions", "models"])
def test_an_empty_axis_is_refused(field):
    with pytest.raises(SpecError, match=f"{field}"):
        _spec(**{field: []})
