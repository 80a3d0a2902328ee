"""bfcl-eval releases in the per-user cache: where it is, what counts as installed, an install that
cannot happen (offline, not on the index, a name that is no release) as one line and exit 2, and
the order `--bfcl-version auto` tries releases in. No test reaches the network: pip is told to
read no index."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.imports import releases
from harness.imports.auto import MAX_TRIED, candidates
from tests.harness.cli.invoke import invoke

DATA = Path(__file__).parents[2] / "data" / "bfcl_results"


def offline(tmp_path: Path) -> dict[str, str]:
    """pip with no index and no configuration: it fails at once, as offline, and never connects."""
    (tmp_path / "no-wheels").mkdir(exist_ok=True)
    return {"PIP_NO_INDEX": "1", "PIP_CONFIG_FILE": os.devnull, "PIP_FIND_LINKS": str(tmp_path / "no-wheels")}


def test_the_cache_is_the_variable_else_xdg_else_home(monkeypatch, tmp_path):
    monkeypatch.setenv(releases.CACHE_ENV, str(tmp_path / "c"))
    assert releases.cache() == tmp_path / "c"
    monkeypatch.delenv(releases.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert releases.cache() == tmp_path / "x" / "repair-harness" / "bfcl-eval"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert releases.cache() == tmp_path / "h" / ".cache" / "repair-harness" / "bfcl-eval"


def test_only_a_whole_folder_counts_as_installed(monkeypatch, tmp_path):
    monkeypatch.setenv(releases.CACHE_ENV, str(tmp_path))
    (tmp_path / ".2025.6.8.k1ll3d" / "bfcl_eval").mkdir(parents=True)  # an install killed before its rename
    (tmp_path / "2025.6.9").mkdir()  # no package in it
    (tmp_path / "2025.7.1" / "bfcl_eval").mkdir(parents=True)  # a package folder cut short (issue 66)
    for version in ("2025.6.30.1", "2025.6.30"):
        (tmp_path / version / "bfcl_eval").mkdir(parents=True)
        (tmp_path / version / "bfcl_eval" / "__init__.py").write_text("")
        (tmp_path / version / f"bfcl_eval-{version}.dist-info").mkdir()
        (tmp_path / version / f"bfcl_eval-{version}.dist-info" / "METADATA").write_text(f"Version: {version}\n")
    assert releases.cached() == ["2025.6.30", "2025.6.30.1"]


def test_an_uninstallable_release_is_one_error_and_leaves_nothing(monkeypatch, tmp_path):
    cache = tmp_path / "cache"
    monkeypatch.setenv(releases.CACHE_ENV, str(cache))
    for name, value in offline(tmp_path).items():
        monkeypatch.setenv(name, value)
    with pytest.raises(releases.ReleaseUnavailable) as info:
        releases.folder("2001.1.1")
    message = str(info.value)
    assert "bfcl-eval 2001.1.1" in message and str(cache) in message and "\n" not in message
    assert list(cache.iterdir()) == []  # the temporary folder went with the failure


def test_offline_import_on_an_uncached_release_exits_2_with_one_line(tmp_path):
    env = {releases.CACHE_ENV: str(tmp_path / "cache"), **offline(tmp_path)}
    xlam = DATA / "Salesforce_Llama-xLAM-2-8b-fc-r"
    result, text = invoke("import", "bfcl", xlam, "--out", tmp_path / "out", "--bfcl-version", "2001.1.1", env=env)
    assert result.exit_code == 2, text
    lines = text.strip().splitlines()
    # what may take minutes is said before it starts (issue 66: 100 s of silence on an index that never answers)
    assert (
        len(lines) == 2 and lines[0].startswith("installing bfcl-eval 2001.1.1 into ") and "at most 600 s" in lines[0]
    )
    assert lines[1].startswith("error: bfcl-eval 2001.1.1 is not in"), text
    assert "cannot be installed there" in text and "Traceback" not in text
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("version", ["2025.6", "latest", "--index-url=http://x", "2025.6.8; rm"])
def test_a_name_that_is_no_dated_release_never_reaches_pip(tmp_path, version):
    xlam = DATA / "Salesforce_Llama-xLAM-2-8b-fc-r"
    result, text = invoke("import", "bfcl", xlam, "--out", tmp_path, "--bfcl-version", version)
    assert result.exit_code == 2 and "a bfcl-eval release is dated, e.g. 2025.6.8, or auto" in text, text


def test_auto_tries_the_files_own_data_series_first_those_here_first_then_spread():
    listed = [f"2025.6.{d}" for d in range(8, 30)] + ["2025.8.6.2", "2025.8.25", "2026.3.23"]
    tried = candidates("BFCL_v3", listed, ["2026.3.23", "2025.6.12"])
    assert tried[0] == "2025.6.12" and len(tried) == MAX_TRIED
    assert tried[1:3] == ["2025.8.6.2", "2025.6.8"]  # the newest and the oldest of the series
    assert all(releases.data_series(v) == "BFCL_v3" for v in tried)
    # a v4 file: the installed release first (free), then the other v4 one, the v3 ones only after them
    v4 = candidates("BFCL_v4", listed, ["2026.3.23"])
    assert v4[:4] == ["2026.3.23", "2025.8.25", "2025.8.6.2", "2025.6.8"] and len(v4) == MAX_TRIED
