"""`--version` and `--help`: every command with its whole first sentence, and the defaults a run
uses."""

from tests.harness.cli.invoke import invoke


def test_version_and_defaults_in_help():
    result, text = invoke("--version")
    assert result.exit_code == 0 and text.startswith("repair-harness ")
    result, text = invoke("run", "--help", env={"COLUMNS": "200"})
    flat = " ".join(text.split())
    assert "[default: prompt]" in flat and "[default: runs/latest]" in flat and "[default: the suite's" in flat


def test_help_lists_every_command_with_its_whole_first_sentence():
    """At 80 columns too: the plain help wraps a command's first sentence, never cuts it to "..."."""
    result, text = invoke("--help")
    flat = " ".join(text.split())
    commands = text[text.index("Commands:") :]
    assert result.exit_code == 0 and "..." not in commands and max(len(line) for line in text.splitlines()) <= 80
    assert (
        "report Solved/N and paired contrasts, a screen per suite; the paper's numbers beside ours where they apply."
        in flat
    )
    assert "reproduce Run a published study's grid, then report ours beside theirs." in flat


def test_run_help_shows_the_defaults_a_run_uses():
    """`run --help` reads its defaults from harness.defaults and envs.study (no pydantic); RunSpec
    and Decoding must take theirs from there too, never a literal of their own."""
    from envs import study
    from envs.contract import Decoding
    from harness import defaults
    from harness.run_spec import RunSpec

    settings = {
        (RunSpec, "sample_seeds"): list(defaults.SAMPLE_SEEDS),
        (RunSpec, "tool_mode"): defaults.TOOL_MODE,
        (RunSpec, "text_calls"): defaults.TEXT_CALLS,
        (RunSpec, "backend"): defaults.BACKEND,
        (RunSpec, "api_key_env"): defaults.API_KEY_ENV,
        (RunSpec, "out"): defaults.OUT,
        (Decoding, "temperature"): study.TEMPERATURE,
        (Decoding, "top_p"): study.TOP_P,
        (Decoding, "max_tokens"): study.MAX_TOKENS,
    }
    result, text = invoke("run", "--help", env={"COLUMNS": "200"})
    flat = " ".join(text.split())
    for (model, field), value in settings.items():
        assert model.model_fields[field].get_default(call_default_factory=True) == value, field
        shown = ",".join(map(str, value)) if isinstance(value, list) else value
        assert f"[default: {shown}]" in flat, field
    # unset, the runner's lanes take defaults.CONCURRENCY, or fill a vLLM server's batch (harness.serving.batch)
    assert RunSpec.model_fields["concurrency"].get_default() is None
    assert f"[default: {defaults.CONCURRENCY}; for a vLLM server the harness starts: as many as keep" in flat
