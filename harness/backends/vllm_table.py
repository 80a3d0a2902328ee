"""The vLLM model presets as plain data, the one table of them.

`harness.backends.vllm_presets` validates each row into a `VllmPreset` (pydantic) as `PRESETS`;
`serve vllm --help` lists the names from here without importing pydantic (benchmarks/startup.py).
Row keys are `VllmPreset` fields.
"""

from __future__ import annotations

from typing import Any

_PAPER = {"max_model_len": 8192, "quantization": "awq", "study": True}
PRESET_ROWS: dict[str, dict[str, Any]] = {
    "qwen2.5-coder-14b-awq": dict(
        hf_id="Qwen/Qwen2.5-Coder-14B-Instruct-AWQ",
        tool_parser="hermes",
        note="often answers calls as fenced/bare JSON (vLLM issue 32926)",
        **_PAPER,
    ),
    "llama-3.1-8b-awq": dict(
        hf_id="hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
        tool_parser="llama3_json",
        chat_template="examples/tool_chat_template_llama3.1_json.jinja",
        **_PAPER,
    ),
    "qwen2.5-7b": dict(hf_id="Qwen/Qwen2.5-7B-Instruct", tool_parser="hermes"),
    "qwen3-8b": dict(
        hf_id="Qwen/Qwen3-8B",
        tool_parser="hermes",
        extra_flags=("--reasoning-parser", "qwen3"),
        note="thinks first; the reasoning parser keeps <think> text out of the content (vLLM >= 0.9)",
    ),
    "llama-3.2-3b": dict(
        hf_id="meta-llama/Llama-3.2-3B-Instruct",
        tool_parser="llama3_json",
        chat_template="examples/tool_chat_template_llama3.2_json.jinja",
    ),
    "mistral-7b-v0.3": dict(
        hf_id="mistralai/Mistral-7B-Instruct-v0.3",
        tool_parser="mistral",
        extra_flags=("--tokenizer-mode", "mistral", "--config-format", "mistral", "--load-format", "mistral"),
        note="mistral_common tokenizer, as vLLM recommends for its tool parser",
    ),
}
