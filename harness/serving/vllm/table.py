"""The vLLM model presets as plain data, the one table of them.

`harness.serving.vllm.rows` validates each row into a `VllmPreset` (pydantic) as `PRESETS`;
`serve vllm --help` lists the names from here without importing pydantic (benchmarks/startup.py).
Row keys are `VllmPreset` fields. A row's `size` (`harness.serving.gpus.ModelSize`) is what the GPU memory
estimate reads, from the model's config.json: all parameters, those of the input embeddings and
the LM head (kept in 16 bits by AWQ checkpoints), layers, KV heads, head dimension.
"""

from __future__ import annotations

from typing import Any

# the parsers vLLM registers (vllm/tool_parsers); a typo here would only surface after loading
KNOWN_TOOL_PARSERS = frozenset(
    {
        "hermes",
        "llama3_json",
        "llama4_json",
        "llama4_pythonic",
        "mistral",
        "pythonic",
        "granite",
        "granite-20b-fc",
        "internlm",
        "jamba",
        "phi4_mini_json",
        "qwen3_coder",
        "qwen3_xml",
        "deepseek_v3",
        "deepseek_v31",
        "glm45",
        "kimi_k2",
        "hunyuan_a13b",
        "minimax",
        "xlam",
        "openai",
        "step3",
        "seed_oss",
    }
)

_PAPER = {"max_model_len": 8192, "quantization": "awq", "study": True}
PRESET_ROWS: dict[str, dict[str, Any]] = {
    "qwen2.5-coder-14b-awq": dict(
        hf_id="Qwen/Qwen2.5-Coder-14B-Instruct-AWQ",
        tool_parser="hermes",
        note="often answers calls as fenced/bare JSON (vLLM issue 32926)",
        size=dict(params_b=14.77, embedding_params_b=1.56, layers=48, kv_heads=8, head_dim=128),
        **_PAPER,
    ),
    "llama-3.1-8b-awq": dict(
        hf_id="hugging-quants/Meta-Llama-3.1-8B-Instruct-AWQ-INT4",
        tool_parser="llama3_json",
        chat_template="examples/tool_chat_template_llama3.1_json.jinja",
        size=dict(params_b=8.03, embedding_params_b=1.05, layers=32, kv_heads=8, head_dim=128),
        **_PAPER,
    ),
    "qwen2.5-7b": dict(
        hf_id="Qwen/Qwen2.5-7B-Instruct",
        tool_parser="hermes",
        size=dict(params_b=7.62, embedding_params_b=1.09, layers=28, kv_heads=4, head_dim=128),
    ),
    "qwen3-8b": dict(
        hf_id="Qwen/Qwen3-8B",
        tool_parser="hermes",
        extra_flags=("--reasoning-parser", "qwen3"),
        note="thinks first; the reasoning parser keeps <think> text out of the content (vLLM >= 0.9)",
        size=dict(params_b=8.19, embedding_params_b=1.24, layers=36, kv_heads=8, head_dim=128),
    ),
    "llama-3.2-3b": dict(
        hf_id="meta-llama/Llama-3.2-3B-Instruct",
        tool_parser="llama3_json",
        chat_template="examples/tool_chat_template_llama3.2_json.jinja",
        size=dict(params_b=3.21, embedding_params_b=0.39, layers=28, kv_heads=8, head_dim=128),
    ),
    "mistral-7b-v0.3": dict(
        hf_id="mistralai/Mistral-7B-Instruct-v0.3",
        tool_parser="mistral",
        extra_flags=("--tokenizer-mode", "mistral", "--config-format", "mistral", "--load-format", "mistral"),
        note="mistral_common tokenizer, as vLLM recommends for its tool parser",
        size=dict(params_b=7.25, embedding_params_b=0.27, layers=32, kv_heads=8, head_dim=128),
    ),
}
