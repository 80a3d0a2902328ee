"""The defaults that `--help` shows, in one place: of the run settings and of the embedded model.

`harness.types.RunSpec` and `envs.contract.Decoding` (pydantic models) and the embedded model's
server (`harness.backends.local`) take their defaults from here, and the help reads them from here
too: it shows what a run uses without importing pydantic or the server machinery.
Dependency-free on purpose (help must start fast, benchmarks/startup.py).
"""

from __future__ import annotations

from common import study

# RunSpec
SAMPLE_SEEDS = (0,)
TOOL_MODE = "prompt"  # native | prompt
TEXT_CALLS = "parse"  # parse | violation: a native-mode call returned as text
BACKEND = "openai"  # openai | vllm
API_KEY_ENV = "OPENAI_API_KEY"
CONCURRENCY = 4  # concurrent episodes per endpoint
OUT = "runs/latest"

# Decoding
TEMPERATURE = 0.0
TOP_P = 1.0
MAX_TOKENS = study.MAX_TOKENS

# the embedded model (harness.backends.local, `serve local`): SmolLM2's trained context and the
# paper's --max-model-len; the bank demo's calls reached 2539 prompt tokens, and a request past
# n_ctx is an HTTP 400, not an answer (+90 MiB RSS over 4096)
N_CTX = 8192
