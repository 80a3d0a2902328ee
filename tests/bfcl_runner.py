"""`python tests/bfcl_runner.py generate|evaluate ...`: BFCL's own command line (`bfcl`, of the
installed bfcl-eval) in this environment.

The `bfcl` extra installs bfcl-eval without its dependencies (their pins clash with ours), and its
command line imports every vendor's handler and BFCL's Java/JavaScript parsers at start-up. The
modules that are missing here (the other vendors' SDKs: anthropic, cohere, mistralai, google-genai,
qwen-agent, writer, boto3; tree_sitter; the memory category's sentence-transformers and faiss)
are stand-ins: importing them works, using one raises. The path a multi-turn entry
takes under BFCL's OpenAI chat-completions handler (`OpenAICompletionsHandler`, FC or prompting)
uses none of them, so every request it sends and every verdict `evaluate` gives is BFCL's own code
on the real `openai` SDK; a run that reached a stand-in stops with its name.

The tests and the benchmarks that run BFCL's command line take its start here: `command()` and
`environment()` (BFCL's runner's own small dependencies installed once by `deps()`).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

# BFCL's runner's own small dependencies (this file stands in for the other vendors' SDKs only)
RUNNER_DEPS = ["filelock==3.20.0", "overrides==7.7.0", "tabulate==0.9.0"]
DEPS = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "repair-harness" / "bfcl-runner-deps"
ROOT = Path(__file__).resolve().parents[1]


def deps() -> Path:
    """The folder of BFCL's runner's own dependencies, installed there the first time."""
    if not (DEPS / "filelock").is_dir():
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(DEPS), *RUNNER_DEPS]
        subprocess.run(cmd, check=True)
    return DEPS


def command(*models: str, served: str | None = None) -> list[str]:
    """`bfcl` of the installed bfcl-eval, as this file runs it: `served`, a model served at
    OPENAI_BASE_URL (see `register`); `models`, names of BFCL's model table spelled `NAME=FC` or
    `NAME=prompting`, added where the table lacks them (see `add`)."""
    cmd = [sys.executable, str(Path(__file__).resolve())]
    for model in models:
        cmd += ["--add-model", model]
    return cmd + (["--served-model", served] if served else [])


def environment(project: Path | str, **extra: str) -> dict[str, str]:
    """The environment of `command()`: BFCL's project root (its result/ and score/ folders) `project`."""
    path = os.pathsep.join([str(ROOT), str(deps())])
    return {**os.environ, "PYTHONPATH": path, "BFCL_PROJECT_ROOT": str(project), **extra}


# import names whose absence BFCL's start-up survives with a stand-in (never used on the OpenAI path)
STAND_INS = (
    "anthropic",
    "cohere",
    "mistralai",
    "google",
    "qwen_agent",
    "writerai",
    "boto3",
    "botocore",
    "tree_sitter",
    "tree_sitter_java",
    "tree_sitter_javascript",
    "sentence_transformers",
    "faiss",
    "rank_bm25",
    "serpapi",
    "html2text",
    "bs4",
    "datamodel_code_generator",
)


class StandInUsed(RuntimeError):
    pass


# False while BFCL's modules import (they build parsers and clients at import time: those calls
# get inert stand-ins); True once the command runs, when any use of a stand-in raises
_RUNNING = False


class _Inert:
    """What a stand-in gives while BFCL imports: anything, callable, never used afterwards."""

    def __init__(self, where: str):
        self._where = where

    def __getattr__(self, name: str) -> Any:
        return _used(f"{self._where}.{name}")

    def __call__(self, *_: Any, **__: Any) -> Any:
        return _used(f"{self._where}()")


def _used(where: str) -> Any:
    if _RUNNING:
        raise StandInUsed(f"{where} is a stand-in (tests/bfcl_runner.py): BFCL reached it")
    return _Inert(where)


class _Module(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        where = f"{self.__name__}.{name}"

        def refuse(self_: Any, *_: Any, **__: Any) -> None:
            _used(where)

        # a class: BFCL's modules subclass some (exceptions among them) and call a few at import
        def anything(self_: Any, attr: str) -> Any:
            return _used(f"{where}().{attr}")

        made = type(name, (Exception,), {"__init__": refuse, "__getattr__": anything, "__module__": self.__name__})
        if name[:1].islower():  # a function: `tree_sitter_java.language()`
            made = _Inert(where)  # type: ignore[assignment]
        setattr(self, name, made)
        return made


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on sys.meta_path: consulted only for what no installed package provides."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if any(fullname == s or fullname.startswith(f"{s}.") for s in STAND_INS):
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = _Module(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        pass


def install() -> None:
    sys.meta_path.append(_Finder())


def _entry(name: str, served: str, fc: bool) -> None:
    """`name` in BFCL's model table for the model served as `served`, on `OpenAICompletionsHandler`
    (FC or prompting), as BFCL's docs add a model."""
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING, ModelConfig
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler

    MODEL_CONFIG_MAPPING[name] = ModelConfig(
        model_name=served,
        display_name=name,
        url="",
        org="",
        license="",
        model_handler=OpenAICompletionsHandler,
        is_fc_model=fc,
    )


def register(served: str) -> None:
    """Two entries of BFCL's model table for a model served at OPENAI_BASE_URL under the name
    `served`: `{served}-FC` (its FC path: the name holds "FC") and `{served}` (its prompting path)."""
    for name, fc in ((f"{served}-FC", True), (served, False)):
        _entry(name, served, fc)


def add(name: str, fc: bool) -> bool:
    """`name` in BFCL's model table (FC or prompting) where the table lacks it; False where the
    table already has it (kept as is)."""
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING

    if name in MODEL_CONFIG_MAPPING:
        return False
    _entry(name, name, fc)
    return True


if __name__ == "__main__":
    # `bfcl_runner.py [--add-model NAME=FC|prompting]... [--served-model NAME] generate|evaluate ...`
    install()
    from bfcl_eval.__main__ import cli

    args = sys.argv[1:]
    while args[:1] == ["--add-model"]:
        name, _, kind = args[1].rpartition("=")
        if kind not in ("FC", "prompting"):
            sys.exit(f"--add-model {args[1]}: NAME=FC or NAME=prompting")
        if add(name, kind == "FC"):
            print(f"{name}: not in BFCL's model table: added on OpenAICompletionsHandler, {kind}", file=sys.stderr)
        args = args[2:]
    if args[:1] == ["--served-model"]:
        register(args[1])
        args = args[2:]
    _RUNNING = True
    sys.argv = ["bfcl", *args]
    cli()
