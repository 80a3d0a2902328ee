"""A run's spec: what to play, with whom, under which conditions (`RunSpec`), what a fork continues
(`ForkSpec`), and how a resumed run may grow its grid (`grows_grid`). The records those runs write
are in `harness.types`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import PydanticCustomError

from envs.contract import Decoding
from harness import defaults
from harness.redact import credentials_in
from harness.shards import parse as parse_shard
from harness.types import ToolMode

# the longest file or folder name (bytes) the common file systems take (ext4, xfs, btrfs, tmpfs)
NAME_MAX = 255


def once_each(values: list[Any]) -> list[Any]:
    """A grid's values, each once, as first named (`--seeds 0..1,1`, `--model X,X`): `run`, `fork` and
    an import name each episode once, never play or record it twice."""
    return list(dict.fromkeys(values))


class Strict(BaseModel):
    """Unknown keys are errors: a misspelt config key must not be silently ignored."""

    model_config = ConfigDict(extra="forbid")


def _unconstrained() -> list[Literal["none", "json", "schema"]]:
    return ["none"]


class ForkSpec(Strict):
    """What a fork continues (harness.fork): the source run directories and their run ids, which
    rejected calls are fork points (first | all | N), and the grid's own axes where given (None:
    each fork point's own model, sample seed, and the budget it had left at the failure).
    check: each point under its source's own condition (`fork --check`). release: the bfcl-eval
    release the sources (imports) were replayed on, which the fork rebuilds and plays on (None:
    sources played here, on the installed one)."""

    sources: list[str]
    runs: list[str]
    at: str = "first"
    models: list[str] | None = None
    seeds: list[int] | None = None
    budget: int | None = Field(None, ge=1)
    check: bool = False
    release: str | None = None

    @field_validator("models", "seeds")
    @classmethod
    def _each_once(cls, values: list[Any] | None) -> list[Any] | None:
        return None if values is None else once_each(values)


class RunSpec(Strict):
    """A resolved run: what to play, with whom, under which conditions."""

    suite: str
    tasks: int | None = Field(None, ge=1, description="first N tasks of the suite; None = all")
    task_ids: list[str] | None = None
    models: list[str]
    conditions: list[str]
    # model calls per episode (tool calls in TextWorld's step protocol); None: the suite's own
    # (`envs.SUITES`), which `build_spec` writes in, so a run's identity always names them
    budgets: list[int] | None = None
    sample_seeds: list[int] = Field(default_factory=lambda: list(defaults.SAMPLE_SEEDS))
    decoding: Decoding = Field(default_factory=Decoding)
    tool_mode: ToolMode = defaults.TOOL_MODE
    # How a native-mode answer whose tool call came back as text is treated:
    # `parse` runs our text parser on it, `violation` counts it as an unparsed call.
    text_calls: Literal["parse", "violation"] = defaults.TEXT_CALLS
    # every rendered feedback value is cut to this many characters; the paper used 240
    feedback_cut: int | None = Field(None, ge=1)
    env_options: dict[str, Any] = Field(default_factory=dict)
    # decoding arms (--constrain): what the server constrains each answer to; a grid axis
    constrain: list[Literal["none", "json", "schema"]] = Field(default_factory=_unconstrained, min_length=1)
    # execution settings: not part of the run's identity
    backend: Literal["openai", "vllm"] = defaults.BACKEND
    endpoints: list[str] = Field(default_factory=list)
    api_key_env: str = defaults.API_KEY_ENV
    # episodes at once per endpoint; None: defaults.CONCURRENCY, or for a vLLM server the harness
    # starts as many as keep its batch full (harness.serving.batch). Given, a vLLM server's bound
    concurrency: int | None = Field(None, ge=1, le=1024)
    # the GPUs of servers the harness starts (harness.serving.gpus, harness.serving.placement): declared, else NVML's
    gpus: list[str] | None = None
    gpu_memory_gib: float | None = Field(None, gt=0)
    # vLLM servers may share a GPU (their --gpu-memory-utilization split); False: one per GPU
    share_gpus: bool = False
    # servers the harness started alive at once (vLLM and llama.cpp); None: as many as fit
    max_servers: int | None = Field(None, ge=1)
    # "I/N": play the I-th of N parts of the grid's keys (harness.shards)
    shard: str | None = None
    request_timeout_s: float = Field(defaults.REQUEST_TIMEOUT_S, gt=0)
    max_retries: int = Field(defaults.MAX_RETRIES, ge=0, le=100)
    max_response_mib: float = Field(defaults.MAX_RESPONSE_MIB, gt=0)
    out: str = defaults.OUT
    # plugin files (harness.plugins) whose suites, conditions and agents the spec may name; run.json
    # records each with its sha256, so they are no part of the identity
    plugins: list[str] = Field(default_factory=list)
    # a fork's source (harness.fork); None: episodes played from their start
    fork: ForkSpec | None = None
    # a condition the grid named twice by two names (an alias beside its spelling): {the other name:
    # the name it plays and is recorded under} (harness.spec), which the run's first line says;
    # never part of a dump: the run's identity is what plays
    also_named: dict[str, str] = Field(default_factory=dict, exclude=True)

    @field_validator("endpoints")
    @classmethod
    def _urls(cls, urls: list[str]) -> list[str]:
        for url in urls:
            if credentials_in(url):
                # the message never repeats the URL: it holds the password
                raise PydanticCustomError(
                    "endpoint_credentials",
                    "an endpoint URL holds credentials (user:password@): give the URL without them and put "
                    "the API key in the environment variable --api-key-env names (default OPENAI_API_KEY)",
                )
            parsed = urlparse(url)
            if parsed.scheme not in ("http", "https") or not parsed.netloc:
                raise ValueError(f"{url!r} is not an http(s) URL such as http://127.0.0.1:8000/v1")
            if "#" in url:  # no server reads it, and it may hold a token: never printed
                raise PydanticCustomError(
                    "endpoint_fragment", "an endpoint URL has no #fragment (no server reads one): remove it"
                )
        return urls

    @field_validator("models")
    @classmethod
    def _model_names(cls, models: list[str]) -> list[str]:
        for name in models:  # `m ` would be sent to the server, and recorded, as another model than `m`
            if name != name.strip() or not name.isprintable():
                raise ValueError(f"model name {name!r} has a leading or trailing space or a control character")
        return models

    @field_validator("out")
    @classmethod
    def _out(cls, out: str) -> str:
        if not out.strip():  # Path("") is the current folder: the run would be written in among its files
            raise ValueError(f"--out {out!r} names no folder; name the run's folder, e.g. runs/mine")
        long = next((part for part in Path(out).parts if len(os.fsencode(part)) > NAME_MAX), None)
        if long is not None:
            raise ValueError(f"a folder name longer than {NAME_MAX} bytes, which no file system takes ({long[:40]}...)")
        return out

    @field_validator("shard")
    @classmethod
    def _shard(cls, shard: str | None) -> str | None:
        if shard is not None:
            i, n = parse_shard(shard)
            return f"{i}/{n}"
        return shard

    def identity(self) -> dict[str, Any]:
        """The fields that decide what the records mean. A run directory keeps one identity.
        The default decoding arm is left out: a run from before `--constrain` keeps its identity."""
        exclude = {
            "backend",
            "endpoints",
            "api_key_env",
            "concurrency",
            "gpus",
            "gpu_memory_gib",
            "share_gpus",
            "max_servers",
            "shard",
            "request_timeout_s",
            "max_retries",
            "max_response_mib",
            "out",
            "plugins",
        }
        exclude |= {"constrain"} if self.constrain == ["none"] else set()
        if self.fork is None:
            return self.model_dump(exclude=exclude | {"fork"})
        nested: dict[str, Any] = dict.fromkeys(exclude, True)
        if self.fork.release is None:  # a fork of sources played here keeps the identity it had before
            nested["fork"] = {"release"}
        return self.model_dump(exclude=nested)

    def identity_hash(self) -> str:
        blob = json.dumps(self.identity(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


# the identity fields a resume may grow: a larger grid only adds episodes
_GRID_LISTS = ("models", "conditions", "budgets", "sample_seeds", "constrain")


def grows_grid(field: str, theirs: dict[str, Any], ours: dict[str, Any]) -> bool:
    """Between two identities (`RunSpec.identity`), `field`'s new value keeps every episode the
    old one planned, and adds some: a run directory may be resumed with it."""
    old, new = theirs.get(field), ours.get(field)
    if field == "constrain":  # left out of an identity while it is the default
        old, new = old or ["none"], new or ["none"]
    if field in _GRID_LISTS:
        return isinstance(old, list) and isinstance(new, list) and set(old) <= set(new)
    if field == "tasks":  # the first N of the same task list (task ids, when given, unchanged)
        return theirs.get("task_ids") == ours.get("task_ids") and old is not None and (new is None or new >= old)
    if field == "task_ids":  # more task ids, the first N not cutting any old one off
        return (
            isinstance(old, list)
            and isinstance(new, list)
            and set(old) <= set(new)
            and theirs.get("tasks") is None
            and ours.get("tasks") is None
        )
    return False
