"""Bad input: one message naming the bad value and the allowed ones, exit code 2, no traceback."""

import pytest
from typer.testing import CliRunner

from harness.cli import app
from tests.harness.bank_script import GOLD, answer, customer_message
from tests.scripted_server import ScriptedServer

runner = CliRunner()


def invoke(*args):
    result = runner.invoke(app, list(args))
    text = result.stdout + (result.stderr if hasattr(result, "stderr") else "")
    return result, " ".join(text.split())


@pytest.mark.parametrize(
    "flag, bad, allowed",
    [
        ("--suite", "bank-dispute", "bank-disputes"),
        ("--conditions", "allowed_yaml", "allowed_json"),
        ("--model", "gpt-17", "local"),
    ],
)
def test_unknown_names_exit_2_with_allowed_values(tmp_path, flag, bad, allowed):
    args = {"--suite": "bank-disputes", "--conditions": "raw", "--model": "local"}
    args[flag] = bad
    flat = [x for kv in args.items() for x in kv]
    result, text = invoke("run", *flat, "--out", str(tmp_path / "r"))
    assert result.exit_code == 2, text
    assert bad in text and allowed in text and "Traceback" not in text


def test_unknown_config_key_and_wrong_type_name_the_field(tmp_path):
    cfg = tmp_path / "grid.toml"
    cfg.write_text('suite = "bank-disputes"\nmodels = ["local"]\nconditions = ["raw"]\nbudgest = [4]\n')
    result, text = invoke("run", "--config", str(cfg))
    assert result.exit_code == 2 and "budgest" in text and "budgets" in text
    cfg.write_text(
        'suite = "bank-disputes"\nmodels = ["local"]\nconditions = ["raw"]\n[decoding]\nmax_tokens = "lots"\n'
    )
    result, text = invoke("run", "--config", str(cfg))
    assert result.exit_code == 2 and "decoding.max_tokens" in text and "integer" in text
    cfg.write_text(
        'suite = "bank-disputes"\nmodels = ["local"]\nconditions = ["raw"]\n[env_options]\ncontract = "lenient"\n'
    )
    result, text = invoke("run", "--config", str(cfg))
    assert result.exit_code == 2 and "contract" in text and "normalizing" in text


def test_bad_integer_list_and_env_flag(tmp_path):
    result, text = invoke(
        "run", "--suite", "bank-disputes", "--model", "local", "--conditions", "raw", "--seeds", "1..x"
    )
    assert result.exit_code == 2 and "1..x" in text
    result, text = invoke(
        "run", "--suite", "bank-disputes", "--model", "local", "--conditions", "raw", "--env", "contract"
    )
    assert result.exit_code == 2 and "KEY=VALUE" in text


def test_a_run_directory_of_another_spec_is_refused(tmp_path):
    out = str(tmp_path / "r")
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        base = [
            "run",
            "--suite",
            "bank-disputes",
            "--model",
            "scripted-model",
            "--endpoint",
            server.url,
            "--tool-mode",
            "native",
            "--tasks",
            "1",
            "--out",
            out,
            "--no-preflight",  # the scripted server answers the suite's requests only
        ]
        result, text = invoke(*base, "--conditions", "raw")
        assert result.exit_code == 0, text
        result, text = invoke(*base, "--conditions", "allowed_json")
        assert result.exit_code == 2 and "another run spec" in text and "conditions" in text


def test_a_model_the_endpoint_does_not_serve_is_named(tmp_path):
    with ScriptedServer(lambda body: answer(GOLD[customer_message(body)], "native")) as server:
        result, text = invoke(
            "run",
            "--suite",
            "bank-disputes",
            "--model",
            "qwen-typo",
            "--endpoint",
            server.url,
            "--conditions",
            "raw",
            "--tasks",
            "1",
            "--out",
            str(tmp_path / "r"),
        )
    assert result.exit_code == 2 and "qwen-typo" in text and "scripted-model" in text


def test_listing_commands_show_the_registries():
    result, text = invoke("conditions")
    assert result.exit_code == 0 and "allowed_prose" in text and "self_check_wait" in text
    result, text = invoke("suites")
    assert result.exit_code == 0 and "bank-disputes" in text


def test_fault_conditions_need_a_suite_with_faults(tmp_path):
    result, text = invoke(
        "run",
        "--suite",
        "bank-disputes",
        "--model",
        "local",
        "--conditions",
        "fault_problem",
        "--out",
        str(tmp_path / "r"),
    )
    assert result.exit_code == 2 and "fault_shape" in text and "fault_problem" in text


def test_the_example_grid_loads_and_expands():
    from pathlib import Path

    from harness.spec import build_spec, load_toml

    spec = build_spec(
        load_toml(Path(__file__).parents[3] / "configs" / "example-grid.toml"), source="example-grid.toml"
    )
    assert spec.suite == "tools-bank" and spec.budgets == [4, 8] and spec.env_options["contract"] == "strict"


def test_a_compute_limit_that_is_no_number_is_refused_before_any_command_runs(tmp_path):
    """Not a harness error in every episode of the run it would start: one line, exit 2, nothing written."""
    args = ["run", "--suite", "bank-disputes", "--model", "agent:reader", "--conditions", "raw", "--tasks", "1"]
    result = runner.invoke(app, [*args, "--out", str(tmp_path / "r")], env={"REPAIR_HARNESS_COMPUTE_LIMIT_S": "ten"})
    text = result.stdout + result.stderr
    assert result.exit_code == 2 and "REPAIR_HARNESS_COMPUTE_LIMIT_S takes a number of seconds > 0" in text
    assert "got 'ten'" in text
    assert not (tmp_path / "r").exists()
