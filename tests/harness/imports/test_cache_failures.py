"""The release cache and its worker, each failure in one line naming the path, the variable and what
to do (issue 66): a cache path that is a file or cannot be written, a release folder cut short or
holding another release, a version spelled two ways or with a newline, an install killed long ago,
a worker killed mid-import (its signal and what was kept). No network: the releases are stand-ins."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from harness.imports import releases
from harness.imports.releases import CACHE_ENV
from tests.harness.cli.invoke import invoke
from tests.harness.imports.standin import standin

GPT = Path(__file__).parents[2] / "data" / "bfcl_results" / "openai_gpt-oss-20b"
OFFLINE = {"PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull}

pytestmark = pytest.mark.extra("bfcl")


def _import(tmp_path: Path, cache: Path | str, version: str = "2025.6.8"):
    env = {CACHE_ENV: str(cache), **OFFLINE, "PIP_FIND_LINKS": str(tmp_path)}
    return invoke("import", "bfcl", GPT, "--out", tmp_path / "out", "--bfcl-version", version, env=env)


def _one_line(result, text, code=2):
    assert result.exit_code == code and "Traceback" not in text, text
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    return lines[0]


def test_a_cache_path_that_is_a_file_is_one_line(tmp_path):
    (tmp_path / "somefile").write_text("x")
    line = _one_line(*_import(tmp_path, tmp_path / "somefile"))
    assert f"the bfcl-eval cache {tmp_path / 'somefile'} (from ${CACHE_ENV}) cannot be a folder" in line
    assert f"set ${CACHE_ENV} to a folder" in line and (tmp_path / "somefile").read_text() == "x"


def test_a_cache_that_cannot_be_written_is_one_line(tmp_path):
    line = _one_line(*_import(tmp_path, "/proc/sys/no-cache-here"))
    assert "the bfcl-eval cache /proc/sys/no-cache-here" in line and "cannot be written" in line
    assert f"set ${CACHE_ENV} to a folder you can write" in line


def test_a_release_folder_cut_short_is_named_not_used(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    (cache / "2025.6.8" / "bfcl_eval").mkdir(parents=True)  # a copy cut short: the worker fell through to the installed
    line = _one_line(*_import(tmp_path, cache))
    assert f"{cache / '2025.6.8'} is no whole bfcl-eval 2025.6.8: its bfcl_eval/ holds no package" in line
    assert "remove it and run again" in line and not (tmp_path / "out").exists()
    monkeypatch.setenv(CACHE_ENV, str(cache))
    assert releases.cached() == []  # auto never counts it among the releases here


def test_a_folder_holding_another_release_is_named_not_used(tmp_path):
    cache = tmp_path / "cache"
    target = standin(cache, "2025.6.8")
    (target / "bfcl_eval-2025.6.8.dist-info" / "METADATA").write_text("Name: bfcl-eval\nVersion: 2025.7.1\n")
    line = _one_line(*_import(tmp_path, cache))
    assert "is no whole bfcl-eval 2025.6.8: it holds bfcl-eval 2025.7.1" in line


def test_one_release_is_one_folder_however_spelled_and_a_newline_is_no_release(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    standin(cache, "2025.6.8")
    result, text = _import(tmp_path, cache, "2025.06.08")
    assert result.exit_code == 0, text
    assert sorted(p.name for p in cache.iterdir()) == ["2025.6.8"]  # no second folder for the same release
    line = _one_line(*_import(tmp_path, cache, "2025.6.8\n"))
    assert "--bfcl-version '2025.6.8\\n': a bfcl-eval release is dated" in line
    monkeypatch.setenv(CACHE_ENV, str(cache))
    assert releases.cached() == ["2025.6.8"]


def test_an_install_says_so_first_and_clears_what_killed_installs_left(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    stale = cache / ".2001.1.1.k1ll3d"
    (stale / "bfcl_eval").mkdir(parents=True)
    old = time.time() - releases.PIP_TIMEOUT_S - 120
    os.utime(stale, (old, old))
    recent = cache / ".2001.1.1.running"  # an install that may still be under way: left alone
    recent.mkdir()
    for name, value in {CACHE_ENV: str(cache), **OFFLINE, "PIP_FIND_LINKS": str(tmp_path)}.items():
        monkeypatch.setenv(name, value)
    said: list[str] = []
    with pytest.raises(releases.ReleaseUnavailable):
        releases.folder("2001.1.1", said.append)
    assert said == [
        f"installing bfcl-eval 2001.1.1 into {cache / '2001.1.1'} (pip install --no-deps, from the package index; "
        f"at most {releases.PIP_TIMEOUT_S} s)"
    ]
    assert sorted(p.name for p in cache.iterdir()) == [".2001.1.1.running"]


def test_a_worker_killed_mid_import_names_its_signal_and_what_was_kept(tmp_path):
    cache = tmp_path / "cache"
    target = standin(cache, "2025.6.8")
    init = target / "bfcl_eval" / "__init__.py"
    init.write_text(init.read_text() + "\nimport os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n")
    result, text = _import(tmp_path, cache)
    line = _one_line(result, text, code=1)
    assert line.startswith(f"stopped: the worker playing on bfcl-eval 2025.6.8 ({target}) was killed by SIGKILL"), line
    assert f"every record it wrote is kept in {tmp_path / 'out'}: run the same command again" in line
