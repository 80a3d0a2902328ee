"""The import rules of docs/architecture.md, read from the source (every import statement, those
inside functions and under TYPE_CHECKING too): which package may import which. A module that
breaks one fails here with its file, its line and the rule."""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODEL_SDKS = ("openai", "aiohttp", "httpx", "llama_cpp", "vllm", "torch", "transformers", "inspect_ai")
# what serving may use of the rest of the harness: the run spec and record types, the defaults,
# the errors, the redactor, and the reference agents (a kind of model); never the runner's parts
SERVING_MAY = (
    "harness.serving",
    "harness.run_spec",
    "harness.types",
    "harness.defaults",
    "harness.errors",
    "harness.redact",
    "harness.agents",
)


@dataclass(frozen=True)
class Import:
    file: str
    line: int
    module: str  # `from M import a, b`: M; `import M`: M
    names: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.module}" + (f" ({', '.join(self.names)})" if self.names else "")


def imports(folder: str) -> list[Import]:
    out = []
    for path in sorted((ROOT / folder).rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(), rel)):
            if isinstance(node, ast.Import):
                out += [Import(rel, node.lineno, a.name) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                assert node.level == 0 and node.module, f"{rel}:{node.lineno}: a relative import"
                names = tuple(a.name for a in node.names)
                # `from harness import serving` is the package harness.serving
                out += [Import(rel, node.lineno, f"{node.module}.{n}") for n in names if node.module == "harness"]
                if node.module != "harness":
                    out.append(Import(rel, node.lineno, node.module, names))
    return out


def under(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def breaking(folder: str, bad: Callable[[Import], bool]) -> list[str]:
    return [str(i) for i in imports(folder) if bad(i)]


@pytest.mark.parametrize("folder", ["envs", "conditions"])
def test_environments_and_conditions_import_neither_the_harness_nor_a_model_sdk(folder: str) -> None:
    assert breaking(folder, lambda i: under(i.module, "harness", *MODEL_SDKS)) == []


def test_results_reads_records_only() -> None:
    assert breaking("results", lambda i: under(i.module, "harness")) == []


def reaches_inside_serving(i: Import) -> bool:
    """An import, outside harness/serving/, of a module inside it or of a name its front door does not give."""
    from harness import serving

    if i.file.startswith("harness/serving/"):
        return False
    if i.module == "harness.serving":
        return any(n not in serving.__all__ for n in i.names)
    return under(i.module, "harness.serving")


def test_outside_serving_the_harness_goes_through_its_front_door() -> None:
    """`harness.serving` is one name to the rest of the harness: the runner, the CLI and the
    readers import its front door (harness/serving/__init__.py), never a module inside it."""
    assert breaking("harness", reaches_inside_serving) == []


def test_serving_imports_nothing_of_the_runner() -> None:
    rest = ("harness", "conditions", "results")
    assert breaking("harness/serving", lambda i: under(i.module, *rest) and not under(i.module, *SERVING_MAY)) == []


def test_the_run_directory_package_knows_no_model_and_no_loop() -> None:
    others = ("harness.serving", "harness.loop", "harness.runner", "harness.readers", "conditions")
    assert breaking("harness/rundir", lambda i: under(i.module, *others)) == []


def test_the_front_door_names_what_it_gives_and_each_name_is_there() -> None:
    from harness import serving

    assert sorted(serving.__all__) == sorted(serving._HOME)
    for name in serving.__all__:
        assert getattr(serving, name) is not None, name


def test_a_module_inside_serving_imported_from_outside_is_caught() -> None:
    assert reaches_inside_serving(Import("harness/runner.py", 1, "harness.serving.batch", ("Lane",)))
    assert reaches_inside_serving(Import("harness/runner.py", 1, "harness.serving", ("placement",)))
    assert not reaches_inside_serving(Import("harness/runner.py", 1, "harness.serving", ("Lane",)))
    assert not reaches_inside_serving(Import("harness/serving/models.py", 1, "harness.serving.batch", ("Lane",)))


def inner_imports_without_a_reason(folder: Path) -> list[str]:
    """Imports inside a function (kept there for a light start-up, an optional extra, a cycle or a
    test's monkeypatch) that give no reason: a comment on the import's lines, or a comment line
    right above the group of imports it starts."""
    out = []
    for path in sorted(folder.rglob("*.py")):
        lines = path.read_text().splitlines()
        functions = [
            n for n in ast.walk(ast.parse("\n".join(lines))) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        for node in {i for f in functions for i in ast.walk(f) if isinstance(i, ast.Import | ast.ImportFrom)}:
            said = any("#" in line for line in lines[node.lineno - 1 : node.end_lineno])
            above = node.lineno - 2
            while not said and above >= 0:
                text = lines[above].strip()
                said = text.startswith("#")
                if said or not (text.startswith(("import ", "from ")) or text.endswith((",", "(")) or text == ")"):
                    break
                above -= 1
            if not said:
                out.append(f"{path.relative_to(folder.parent)}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return sorted(out)


@pytest.mark.parametrize("folder", ["harness", "envs", "conditions", "results"])
def test_an_import_inside_a_function_says_why_it_is_there(folder: str) -> None:
    assert inner_imports_without_a_reason(ROOT / folder) == []


def test_an_unexplained_import_inside_a_function_is_caught(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(
        "def f():\n    import json\n\n    # pandas: not for --help\n    import pandas\n    import numpy\n"
        "    import csv  # a reason on its line\n"
    )
    assert inner_imports_without_a_reason(tmp_path / "pkg") == ["pkg/m.py:2: import json"]
