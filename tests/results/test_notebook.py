"""notebooks/reproduce_paper.ipynb runs top to bottom on a recorded run, and is stored clean."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from results.plots import FIGURES

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "reproduce_paper.ipynb"


def test_stored_without_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.outputs == [] and c.execution_count is None for c in code)
    assert [c for c in code if "parameters" in c.metadata.get("tags", [])], "no cell tagged `parameters`"


def _defaults(repo: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """RUN_DIR as the notebook's parameters cell sets it when no environment variable is given."""
    nb = nbformat.read(NOTEBOOK, as_version=4)
    source = next(c.source for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    monkeypatch.delenv("RUN_DIR", raising=False)
    monkeypatch.chdir(repo / "notebooks")
    scope: dict = {}
    exec(source, scope)  # the notebook's own cell, as the kernel would run it
    return [str(Path(p)) for p in scope["RUN_DIR"].split(os.pathsep)]


def test_default_folders_are_where_demo_and_reproduce_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import inspect

    from harness.cli import demo

    (tmp_path / "notebooks").mkdir()
    assert inspect.signature(demo.demo).parameters["out"].default.default == Path("runs/demo")
    assert _defaults(tmp_path, monkeypatch) == [
        str(Path("..") / "runs/demo/textworld"),
        str(Path("..") / "runs/demo/bank"),
    ]
    (tmp_path / "runs" / "paper-primary-local").mkdir(parents=True)  # `reproduce paper --model local`'s folder
    assert _defaults(tmp_path, monkeypatch) == [str(Path("..") / "runs/paper-primary-local")]


@pytest.fixture
def venv_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A `python3` kernel spec that runs this interpreter, found before any user-level one."""
    from ipykernel.kernelspec import install

    prefix = tmp_path / "jupyter"
    install(kernel_name="python3", prefix=str(prefix))
    monkeypatch.setenv("JUPYTER_PATH", str(prefix / "share" / "jupyter"))
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    assert spec.argv[0] == sys.executable
    return "python3"


def test_notebook_rebuilds_tables_and_figures(
    two_model_run: Path, tmp_path: Path, venv_kernel: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    figs = tmp_path / "figs"
    monkeypatch.setenv("RUN_DIR", str(two_model_run))
    monkeypatch.setenv("FIG_DIR", str(figs))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name=venv_kernel, timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "\n".join(
        str(out.get("text", ""))
        + str(out.get("data", {}).get("text/plain", ""))
        + str(out.get("data", {}).get("text/markdown", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
    )
    assert "80 episodes" in text and "harness errors: 0" in text
    assert "| allowed_json | qwen2.5-coder-14b-awq | 9/10 |" in text  # the report, in markdown
    assert "different model, no published reference" in text
    assert "contrasts (planned): allowed_prose-raw, allowed_json-raw" in text
    images = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if "image/png" in o.get("data", {})]
    assert len(images) == len(FIGURES)
    assert sorted(p.name for p in figs.iterdir()) == sorted(
        f"{n}.{e}"
        for n in (
            "success_by_condition",
            "success_vs_budget",
            "tokens_per_success",
            "repair_funnel",
            "repair_dynamics",
            "failure_codes",
            "factor_effects",
        )
        for e in ("png", "pdf")
    )


def test_notebook_on_a_run_the_harness_recorded(
    tmp_path: Path, venv_kernel: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The notebook on real records: a paper-protocol grid the runner plays against the scripted server."""
    import asyncio
    import json

    from harness.runner import run
    from harness.spec import build_spec
    from tests.scripted_server import Reply, ScriptedServer

    def responder(body):  # a bad first plan, then one valid command: the game stays unfinished
        retry = "Your previous answer was" in body["messages"][-1]["content"]
        return Reply(text=json.dumps({"answer": {"commands": ["look"] if retry else ["xyzzy"]}}))

    with ScriptedServer(responder) as server:
        spec = build_spec(
            {
                "suite": "paper-textworld",
                "models": ["scripted-model"],
                "endpoints": [server.url],
                "conditions": ["raw", "loc_obs", "allowed_prose", "allowed_json"],
                "tasks": 2,
                "budgets": [2],
                "feedback_cut": 240,
                "out": str(tmp_path / "run"),
            }
        )
        asyncio.run(run(spec))
    monkeypatch.setenv("RUN_DIR", spec.out)
    monkeypatch.setenv("FIG_DIR", str(tmp_path / "figs"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name=venv_kernel, timeout=300, resources={"metadata": {"path": str(tmp_path)}}).execute()
    text = "\n".join(
        str(out.get("text", "")) + str(out.get("data", {}).get("text/markdown", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for out in cell.outputs
    )
    assert "8 episodes" in text and "| allowed_json | scripted-model | 0/2 |" in text
    assert len(list((tmp_path / "figs").iterdir())) == 2 * len(FIGURES)
