"""harness.spec: a grid names each axis value once, and names something on every axis."""

from pathlib import Path

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


def test_a_condition_named_twice_keeps_the_other_name_for_the_run_to_say_and_no_dump_holds_it():
    spelled = "retry+code+location+observed+allowed@json"
    spec = _spec(conditions=[spelled, "raw", "allowed_json"])
    assert spec.conditions == [spelled, "raw"] and spec.also_named == {"allowed_json": spelled}
    assert "also_named" not in spec.model_dump() and _spec(conditions=["raw"]).also_named == {}


@pytest.mark.parametrize("field", ["budgets", "sample_seeds", "constrain", "conditions", "models"])
def test_an_empty_axis_is_refused(field):
    with pytest.raises(SpecError, match=f"{field}"):
        _spec(**{field: []})


def test_bad_grid_files_and_flags_are_one_line_exit_2(tmp_path):
    """Damaged or odd input meets one line and exit 2, never a traceback (issue 49)."""
    from tests.harness.cli.invoke import invoke

    head = b'suite = "bank-disputes"\nmodels = ["agent:gold"]\nconditions = ["raw"]\n'
    grids = {
        "decoding.toml": (head + b"decoding = 5\n", "decoding must be a table"),
        "bytes.toml": (head + b'out = "r\xff"\n', "not UTF-8 text"),
        "deep.toml": (head + b"x = " + b"[" * 500 + b"]" * 500 + b"\n", "nested too deep"),
    }
    for name, (data, said) in grids.items():
        (tmp_path / name).write_bytes(data)
        result, text = invoke("run", "--config", tmp_path / name, "--out", tmp_path / "r")
        assert result.exit_code == 2 and said in text and "Traceback" not in text, (name, text)
    flags = ("run", "--suite", "bank-disputes", "--model", "agent:gold", "--conditions", "raw")
    result, text = invoke(*flags, "--env", "n_tasks=" + "[" * 50_000, "--out", tmp_path / "r")
    assert result.exit_code == 2 and "n_tasks" in text and len(text) < 2_000, text[:300]
    result, text = invoke(*flags, "--out", tmp_path / ("x" * 300))
    assert result.exit_code == 2 and "longer than 255 bytes" in text and "Traceback" not in text


def test_a_grid_files_paths_are_relative_to_the_file(tmp_path):
    from harness.spec import load_toml

    folder = tmp_path / "study"
    folder.mkdir()
    grid = folder / "grid.toml"
    grid.write_text('suite = "bank-disputes"\nout = "runs/a"\nplugins = ["mine.py"]\n')
    values = load_toml(grid)
    assert values["out"] == str(folder / "runs" / "a") and values["plugins"] == [str(folder / "mine.py")]


def test_a_grid_files_out_is_shown_resolved_never_through_dot_dot(tmp_path, monkeypatch):
    from harness.spec import load_toml

    (tmp_path / "configs").mkdir()
    grid = tmp_path / "configs" / "grid.toml"
    grid.write_text('suite = "bank-disputes"\nout = "../runs/a"\n')
    monkeypatch.chdir(tmp_path)
    assert load_toml(Path("configs/grid.toml"))["out"] == str(Path("runs") / "a")
    monkeypatch.chdir(tmp_path / "configs")  # out lies outside the working directory: absolute
    assert load_toml(Path("grid.toml"))["out"] == str(tmp_path.resolve() / "runs" / "a")


def test_an_endpoints_fragment_is_refused_and_never_printed():
    """Issue 57: a `#fragment` of the endpoint URL (no server reads one; it may hold a token) was
    printed; now refused, and what is echoed of a URL has its fragment masked."""
    with pytest.raises(SpecError) as caught:
        build_spec(
            {
                "suite": "bank-disputes",
                "models": ["m"],
                "conditions": ["raw"],
                "endpoints": ["http://127.0.0.1:8000/v1#secret-fragment"],
            }
        )
    assert "no #fragment" in str(caught.value) and "secret-fragment" not in str(caught.value)


def test_a_model_name_with_a_trailing_space_is_refused():
    with pytest.raises(SpecError, match="leading or trailing space"):
        build_spec(
            {
                "suite": "bank-disputes",
                "models": ["m "],
                "conditions": ["raw"],
                "endpoints": ["http://127.0.0.1:8000/v1"],
            }
        )
