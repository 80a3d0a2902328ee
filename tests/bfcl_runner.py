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
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import types
from typing import Any

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


def register(served: str) -> None:
    """Two entries of BFCL's model table for a model served at OPENAI_BASE_URL under the name
    `served`, both on `OpenAICompletionsHandler`: `{served}-FC` (its FC path: the name holds "FC")
    and `{served}` (its prompting path), as BFCL's docs add a model."""
    from bfcl_eval.constants.model_config import MODEL_CONFIG_MAPPING, ModelConfig
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler

    for name, fc in ((f"{served}-FC", True), (served, False)):
        MODEL_CONFIG_MAPPING[name] = ModelConfig(
            model_name=served,
            display_name=name,
            url="",
            org="",
            license="",
            model_handler=OpenAICompletionsHandler,
            is_fc_model=fc,
        )


if __name__ == "__main__":
    # `bfcl_runner.py --served-model NAME generate|evaluate ...`
    install()
    from bfcl_eval.__main__ import cli

    args = sys.argv[1:]
    if args[:1] == ["--served-model"]:
        register(args[1])
        args = args[2:]
    _RUNNING = True
    sys.argv = ["bfcl", *args]
    cli()
