"""The command line holds commands and their printing; the logic they call lives in the packages.

Counted: every function or method of harness/cli/*.py that typer does not call as a command or a
callback (`@app.command`, `@app.callback`, or a parameter's `callback=`), in source lines from its
first decorator to its last line, docstring included.
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[3] / "harness" / "cli"
LIMIT = 200


def _typer_callables(tree: ast.Module) -> set[str]:
    """The names passed as `callback=` anywhere in the module (typer.Option, typer.Argument)."""
    return {
        kw.value.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for kw in node.keywords
        if kw.arg == "callback" and isinstance(kw.value, ast.Name)
    }


def _is_command(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(
        isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr in ("command", "callback")
        for d in fn.decorator_list
    )


def helpers(folder: Path = CLI) -> list[tuple[int, str]]:
    """(lines, file:name) of each helper function or method, largest first."""
    out = []
    for file in sorted(folder.glob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"))
        called_by_typer = _typer_callables(tree)
        for node in tree.body:
            members = node.body if isinstance(node, ast.ClassDef) else [node]
            for fn in members:
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                if _is_command(fn) or fn.name in called_by_typer:
                    continue
                first = min([fn.lineno, *(d.lineno for d in fn.decorator_list)])
                assert fn.end_lineno is not None
                out.append((fn.end_lineno - first + 1, f"{file.name}:{fn.name}"))
    return sorted(out, reverse=True)


def test_the_cli_helpers_total_at_most_200_lines() -> None:
    found = helpers()
    total = sum(n for n, _ in found)
    largest = "\n".join(f"  {n:4d}  {name}" for n, name in found[:12])
    assert total <= LIMIT, f"harness/cli/ helpers: {total} lines (limit {LIMIT}); the largest:\n{largest}"


def test_the_count_sees_helpers_and_skips_commands(tmp_path: Path) -> None:
    """The check above can fail: a helper counts with its decorator and docstring, a command and a
    typer callback do not."""
    (tmp_path / "mod.py").write_text(
        "import functools\n"
        "import typer\n"
        "app = typer.Typer()\n"
        "def _flag(value: bool) -> None:\n"
        "    pass\n"
        "@app.command()\n"
        "def cmd(v: bool = typer.Option(False, callback=_flag)) -> None:\n"
        "    pass\n"
        "@functools.cache\n"
        "def helper() -> int:\n"
        '    """doc"""\n'
        "    return 1\n"
        "class Group:\n"
        "    def invoke(self) -> None:\n"
        "        pass\n",
        encoding="utf-8",
    )
    assert helpers(tmp_path) == [(4, "mod.py:helper"), (2, "mod.py:invoke")]
