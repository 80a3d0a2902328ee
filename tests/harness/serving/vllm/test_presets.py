"""The vLLM preset table, the `vllm serve` command builder and its checks before launch.

vLLM and a GPU are not available here: what is tested is the argv we would run and every
rejection that must happen before it runs.
"""

import importlib.util

import pytest

from harness.serving.server_proc import MissingExtra
from harness.serving.vllm.presets import (
    VllmConfigError,
    VllmServer,
    find_chat_template,
    vllm_command,
)
from harness.serving.vllm.rows import PRESETS


def _flag(cmd, name):
    return cmd[cmd.index(name) + 1]


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_builds_a_serve_command_with_the_paper_settings(name):
    p = PRESETS.get(name)
    cmd = vllm_command(name, tp=2, dp=4, port=8123)
    assert cmd[:3] == ["vllm", "serve", p.hf_id]
    assert "--enable-auto-tool-choice" in cmd and _flag(cmd, "--tool-call-parser") == p.tool_parser
    assert _flag(cmd, "--max-model-len") == str(p.max_model_len)
    assert _flag(cmd, "--tensor-parallel-size") == "2" and _flag(cmd, "--data-parallel-size") == "4"
    assert _flag(cmd, "--port") == "8123" and _flag(cmd, "--host") == "127.0.0.1"
    assert _flag(cmd, "--generation-config") == "vllm"
    assert ("--chat-template" in cmd) == (p.chat_template is not None)
    assert ("--quantization" in cmd) == (p.quantization is not None)
    # the server answers to the HF id and to the short preset name
    served = cmd[cmd.index("--served-model-name") + 1 :][:2]
    assert served == [p.hf_id, p.name]
    if p.extra_flags:
        assert cmd[-len(p.extra_flags) :] == list(p.extra_flags)


def test_the_study_presets_match_the_paper():
    qwen, llama = PRESETS.get("qwen2.5-coder-14b-awq"), PRESETS.get("llama-3.1-8b-awq")
    assert (qwen.hf_id, qwen.tool_parser, qwen.quantization, qwen.max_model_len) == (
        "Qwen/Qwen2.5-Coder-14B-Instruct-AWQ",
        "hermes",
        "awq",
        8192,
    )
    assert (llama.hf_id, llama.tool_parser, llama.quantization, llama.max_model_len) == (
        "hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
        "llama3_json",
        "awq",
        8192,
    )
    assert (
        _flag(vllm_command("llama-3.1-8b-awq"), "--chat-template") == "examples/tool_chat_template_llama3.1_json.jinja"
    )
    assert qwen.study and llama.study and not PRESETS.get("qwen2.5-7b").study


def test_prompt_mode_serving_drops_the_tool_flags():
    cmd = vllm_command("llama-3.1-8b-awq", native_tools=False)
    assert "--enable-auto-tool-choice" not in cmd and "--tool-call-parser" not in cmd and "--chat-template" not in cmd


def test_unknown_preset_lists_the_presets():
    with pytest.raises(VllmConfigError) as err:
        vllm_command("qwen-99b")
    assert "'qwen-99b'" in str(err.value) and all(name in str(err.value) for name in PRESETS)


def test_raw_hf_id_needs_a_tool_parser_or_no_native_tools():
    with pytest.raises(VllmConfigError, match="--tool-parser"):
        vllm_command("Qwen/Qwen2.5-0.5B-Instruct")
    cmd = vllm_command("Qwen/Qwen2.5-0.5B-Instruct", tool_parser="hermes")
    assert _flag(cmd, "--tool-call-parser") == "hermes" and cmd[2] == "Qwen/Qwen2.5-0.5B-Instruct"
    assert "--tool-call-parser" not in vllm_command("Qwen/Qwen2.5-0.5B-Instruct", native_tools=False)
    with pytest.raises(VllmConfigError, match="unknown tool parser 'hermess'"):
        vllm_command("Qwen/Qwen2.5-0.5B-Instruct", tool_parser="hermess")


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({"tp": 0}, "--tp must be at least 1, got 0"),
        ({"tp": 3}, "--tp must be a power of two"),
        ({"tp": 6}, "--tp must be a power of two"),
        ({"dp": 0}, "--dp must be at least 1, got 0"),
        ({"port": 0}, "--port must be in 1..65535, got 0"),
        ({"port": 65536}, "--port must be in 1..65535, got 65536"),
        ({"max_model_len": 0}, "max model len must be positive, got 0"),
        ({"max_model_len": -5}, "max model len must be positive"),
    ],
)
def test_bad_flags_fail_before_launch_with_the_reason(kwargs, reason):
    with pytest.raises(VllmConfigError) as err:
        vllm_command("qwen2.5-7b", **kwargs)
    assert reason in str(err.value)


def test_several_problems_are_reported_together():
    with pytest.raises(VllmConfigError) as err:
        vllm_command("qwen2.5-7b", tp=3, dp=0, port=99999)
    assert str(err.value).count(";") == 2


def test_chat_template_lookup_says_where_to_get_it(tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_SOURCE_DIR", raising=False)
    with pytest.raises(VllmConfigError, match="VLLM_SOURCE_DIR"):
        find_chat_template("examples/tool_chat_template_llama3.1_json.jinja")
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "tool_chat_template_llama3.1_json.jinja").write_text("{{ messages }}")
    monkeypatch.setenv("VLLM_SOURCE_DIR", str(tmp_path))
    found = find_chat_template("examples/tool_chat_template_llama3.1_json.jinja")
    assert found == tmp_path / "examples" / "tool_chat_template_llama3.1_json.jinja"


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_serving_without_vllm_names_the_extra():
    with pytest.raises(MissingExtra, match=r"pip install 'repair-harness\[vllm\]'"):
        VllmServer("qwen2.5-7b")
