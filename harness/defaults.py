"""The defaults of a run's settings and of the embedded model, in one place.

`harness.run_spec.RunSpec`, the OpenAI-compatible backend and the embedded model's server
(`harness.serving.llama.local`) take their defaults from here, and `--help` reads them from here too:
it shows what a run uses without importing pydantic or the server machinery. The decoding's
defaults are the study's (`envs.study`: greedy, 512 tokens), beside `envs.contract.Decoding`.
Dependency-free on purpose (help must start fast, benchmarks/startup.py).
"""

from __future__ import annotations

from typing import Literal

# RunSpec
SAMPLE_SEEDS = (0,)
TOOL_MODE: Literal["native", "prompt"] = "prompt"
TEXT_CALLS: Literal["parse", "violation"] = "parse"  # a native-mode call returned as text
BACKEND: Literal["openai", "vllm"] = "openai"
API_KEY_ENV = "OPENAI_API_KEY"
CONCURRENCY = 4  # concurrent episodes per endpoint
OUT = "runs/latest"
# a model call: its whole time, and how often a transient failure (429, 5xx, a dropped
# connection, a timeout) is tried again before the call is a harness error
REQUEST_TIMEOUT_S = 120.0
MAX_RETRIES = 4
# an answer larger than this is a harness error, read no further (--max-response-mib): a chat
# completion is kilobytes; the cap keeps a broken or hostile server from filling memory
MAX_RESPONSE_MIB = 32.0
# the longest wait a server's Retry-After is granted; one asking for more stops the run, naming it
MAX_RETRY_AFTER_S = 300.0

# the embedded model (harness.serving.llama.local, `serve local`): SmolLM2's trained context and the
# paper's --max-model-len; the bank demo's calls reached 2539 prompt tokens, and a request past
# n_ctx is an HTTP 400, not an answer (+90 MiB RSS over 4096)
N_CTX = 8192

# the most episodes one run's grid may hold: the grid is expanded in memory before anything plays
# (about 1.4 KB an episode: a 3,000,000-seed grid peaked at 4.1 GB)
MAX_EPISODES = 1_000_000
