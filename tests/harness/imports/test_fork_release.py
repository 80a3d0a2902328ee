"""A fork of an import rebuilds and plays on the bfcl-eval release the import was replayed on (run.json's
`imported.bfcl_eval`), in a worker on it, as the import did: the backends' texts are that release's, so
every fork point rebuilds; older releases keep their own rules (the backend instances' names). The
release is a stand-in (tests/harness/imports/standin.py) whose file system says "no such folder here":
no network."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.imports.releases import CACHE_ENV
from tests.harness.cli.invoke import invoke
from tests.harness.imports.standin import BACKEND, standin

DATA = Path(__file__).parents[2] / "data" / "bfcl_results"
GPT4O = "gpt-4o-2024-08-06-FC--bfcl-base"  # a v3 file with no log: base_7's `find` fails
THEIRS = "No such file or directory"
OURS = "No such folder here"

pytestmark = pytest.mark.extra("bfcl")


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    cache = tmp_path_factory.mktemp("releases")
    backend = standin(cache, "2099.1.1") / "bfcl_eval" / BACKEND
    backend.write_text(backend.read_text().replace(THEIRS, OURS))
    env = {CACHE_ENV: str(cache)}
    out = tmp_path_factory.mktemp("imp")
    result, text = invoke(
        "import", "bfcl", DATA / "gpt-4o-2024-08-06-FC", "--out", out, "--bfcl-version", "2099.1.1", env=env
    )
    assert result.exit_code == 0, text
    return out / GPT4O, env


def _records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]


def _outcomes(run: Path, record: dict) -> list[dict]:
    return [t["outcome"] for t in json.loads((run / record["transcript"]).read_text())["turns"]]


def test_the_import_recorded_the_releases_text(imported):
    run, _ = imported
    base_7 = next(r for r in _records(run) if r["task_id"] == "base_7")
    failed = [o for o in _outcomes(run, base_7) if o.get("code") == "backend_error"]
    assert len(failed) == 1 and OURS in failed[0]["raw"] and THEIRS not in failed[0]["raw"]


def test_fork_check_rebuilds_every_point_on_the_imports_release(imported, tmp_path):
    run, env = imported
    result, text = invoke("fork", run, "--check", "--out", tmp_path / "check", env=env)
    flat = " ".join(text.split())
    assert result.exit_code == 0, text
    # on the installed release the find's text is BFCL's own, not the one recorded: refused
    assert "1 fork points of the import rebuilt" in flat and "refused" not in flat, flat


def test_a_fork_plays_on_the_imports_release_and_says_which(imported, tmp_path):
    run, env = imported
    out = tmp_path / "fork"
    result, text = invoke(
        "fork",
        run,
        "--model",
        "agent:stubborn",
        "--conditions",
        "bfcl-native,raw",
        "--budget",
        "2",
        "--out",
        out,
        env=env,
    )
    assert result.exit_code == 0, text
    forks = _records(out)
    assert {r["condition"] for r in forks} == {"bfcl-native", "raw"}
    for r in forks:  # the stubborn agent sends the failed find again: the release's text answers it
        turns = json.loads((out / r["transcript"]).read_text())["turns"]
        after = [t["outcome"] for t in turns if not t.get("replayed")]
        assert after and all(OURS in str(o.get("raw")) for o in after), after
        assert r["repaired_next"] is False
    spec = json.loads((out / "run.json").read_text())["spec"]
    assert spec["fork"]["release"] == "2099.1.1"


def test_on_the_installed_release_the_same_point_would_not_rebuild(imported, tmp_path, monkeypatch):
    """What a fork did before it played on the import's release: the recorded text is not the
    installed backend's, and the point is refused (the check above could fail)."""
    from harness.imports import releases

    run, env = imported
    monkeypatch.setattr(releases, "installed", lambda: "2099.1.1")  # the fork then plays here
    result, text = invoke("fork", run, "--check", "--out", tmp_path / "check", env=env)
    assert result.exit_code == 2 and "state not rebuilt" in text and OURS in text, text


_NO_BFCL = """
import sys
class NoBfcl:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "bfcl_eval":
            raise ImportError(name)
sys.meta_path.insert(0, NoBfcl())
sys.argv = ["repair-harness", *sys.argv[1:]]
from harness.cli import app
app()
"""


def test_show_replays_nothing_it_prints_what_the_release_answered(imported):
    """`show` reads the transcript the import wrote on its release: no bfcl-eval, installed or cached,
    is imported, so no release's text can stand in for the one recorded."""
    run, _ = imported
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[3]), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", _NO_BFCL, "show", str(run), "--task", "base_7"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr
    assert OURS in done.stdout and THEIRS not in done.stdout


def test_imports_of_two_releases_fork_in_one_run_each():
    """`--bfcl-version auto` may replay a folder's files on several releases: each release's sources
    are one fork run, on its own release; a run played here names none."""
    from harness.fork import Source, groups
    from harness.fork_imports import release_of

    spec = {"suite": "bfcl-base", "env_options": {"protocol": "bfcl"}, "tool_mode": "native"}

    def source(name: str, release: str | None) -> Source:
        sessions = [{"imported": {"bfcl_eval": release}}] if release else [{"versions": {}}]
        return Source(Path(name), {"run_id": name, "spec": spec, "sessions": sessions})

    found = groups([source("a", "2025.8.6.2"), source("b", "2026.3.23"), source("c", "2025.8.6.2"), source("d", None)])
    assert [[s.run_id for s in g] for g in found] == [["a", "c"], ["b"], ["d"]]
    assert [release_of(g[0]) for g in found] == ["2025.8.6.2", "2026.3.23", None]
