"""The `extra` marker (tests/conftest.py): a test whose extra is missing is skipped with the extra
and its install command, and fails instead under `--all-extras` (the README's test command, for
the extras that command installs) or `--require-extra NAME`, before its fixtures run.

The mechanism runs in a pytest subprocess on a generated test file whose conftest takes the hooks
from tests/conftest.py and declares made-up extras: one whose module exists, two whose module
does not (one of them among the extras the test command installs, one not).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests import conftest as extras

ROOT = Path(__file__).resolve().parents[1]
ABSENT = "repair_harness_no_such_module"

CONFTEST = f"""
import tests.conftest as extras
from tests.conftest import pytest_addoption, pytest_collection_modifyitems, pytest_configure, pytest_runtest_setup

extras.EXTRAS["gone"] = extras.Extra(({ABSENT!r},), "pip install gone-package")
extras.EXTRAS["optional"] = extras.Extra(({ABSENT!r},), "pip install optional-package")
extras.EXTRAS["here"] = extras.Extra(("json",), "pip install here-package")
extras.TEST_COMMAND_EXTRAS = ("gone", "here")
"""

TESTS = f"""
import pytest


@pytest.fixture
def gone_module():
    import {ABSENT}  # what a test needing the extra would do: it must never run without it


@pytest.mark.extra("gone")
def test_gone(gone_module):
    pass


@pytest.mark.extra("here")
def test_here():
    pass


@pytest.mark.extra("optional")
def test_optional():
    pass


@pytest.mark.extra("here", "gone")
def test_both():
    pass


@pytest.mark.parametrize("x", [1, pytest.param(2, marks=pytest.mark.extra("gone"))])
def test_param(x):
    pass


def test_plain():
    pass
"""


def _run(tmp_path: Path, *args: str, tests: str = TESTS) -> tuple[int, str, dict[str, tuple[str, str]]]:
    """pytest on the generated file: its exit code, its output, and per test (outcome, message)."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    extra(*names): needs these extras\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_fake.py").write_text(tests)
    xml = tmp_path / "report.xml"
    xml.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", f"--junitxml={xml}", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    outcomes: dict[str, tuple[str, str]] = {}
    if xml.exists():
        for case in ET.parse(xml).iter("testcase"):
            child = next((c for c in case if c.tag in {"skipped", "error", "failure"}), None)
            outcome = "passed" if child is None else child.tag
            outcomes[case.attrib["name"]] = (outcome, "" if child is None else child.attrib.get("message", ""))
    return p.returncode, p.stdout + p.stderr, outcomes


def test_a_missing_extra_is_a_skip_naming_the_extra_and_its_install_command(tmp_path):
    code, out, outcomes = _run(tmp_path)
    assert code == 0, out
    assert {name: o for name, (o, _) in outcomes.items()} == {
        "test_gone": "skipped",
        "test_here": "passed",
        "test_optional": "skipped",
        "test_both": "skipped",
        "test_param[1]": "passed",
        "test_param[2]": "skipped",
        "test_plain": "passed",
    }, out
    assert outcomes["test_gone"][1] == f"needs the [gone] extra ({ABSENT} not found): pip install gone-package"
    assert outcomes["test_optional"][1].startswith("needs the [optional] extra")
    assert outcomes["test_both"][1].startswith("needs the [gone] extra")  # the one that is missing
    # the skip is reported at the test, not at the conftest, in one line
    skips = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert len(skips) == 4 and all(
        "test_fake.py:" in line and ("[gone]" in line or "[optional]" in line) for line in skips
    )
    assert "ModuleNotFoundError" not in out  # the fixture importing the missing module never ran


def test_under_all_extras_a_missing_extra_of_the_test_command_fails_before_the_fixtures(tmp_path):
    code, out, outcomes = _run(tmp_path, "--all-extras")
    assert code == 1, out
    failed = {name for name, (o, _) in outcomes.items() if o in {"error", "failure"}}
    assert failed == {"test_gone", "test_both", "test_param[2]"}, out
    said = f"--all-extras: needs the [gone] extra ({ABSENT} not found): pip install gone-package"
    assert said in outcomes["test_gone"][1] and said in out
    assert "ModuleNotFoundError" not in out
    # an extra the test command does not install stays a skip, with its reason
    assert outcomes["test_optional"] == (
        "skipped",
        f"needs the [optional] extra ({ABSENT} not found): pip install optional-package",
    )
    assert outcomes["test_here"][0] == outcomes["test_plain"][0] == outcomes["test_param[1]"][0] == "passed"


def test_require_extra_makes_one_more_extra_a_failure(tmp_path):
    code, out, outcomes = _run(tmp_path, "--require-extra", "optional")
    assert code == 1, out
    assert (
        outcomes["test_optional"][0] == "error"
        and "--require-extra optional: needs the [optional] extra" in (outcomes["test_optional"][1])
    )
    assert outcomes["test_gone"][0] == "skipped"  # not required without --all-extras
    code, out, _ = _run(tmp_path, "--require-extra", "nonesuch")
    assert code == 4 and "unknown extra nonesuch" in out, out


def test_an_unknown_extra_in_a_marker_stops_the_run(tmp_path):
    code, out, _ = _run(tmp_path, tests='import pytest\n\n@pytest.mark.extra("gnoe")\ndef test_typo():\n    pass\n')
    assert code != 0 and "unknown extra gnoe" in out, out


def _readme_test_command() -> str:
    blocks = re.findall(r"```bash\n(python3 -m venv .venv[^\n]*)\n```", (ROOT / "README.md").read_text())
    return blocks[1]


def test_all_extras_covers_exactly_the_extras_the_readme_test_command_installs():
    command = _readme_test_command()
    (installed,) = re.findall(r'-e "\.\[([a-z0-9,-]+)\]"', command)
    assert sorted(extras.TEST_COMMAND_EXTRAS) == sorted(installed.split(","))
    assert command.endswith("python -m pytest --all-extras")
    # every extra a marker may name is one of the project's extras
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert set(extras.EXTRAS) <= set(declared), set(extras.EXTRAS) - set(declared)


@pytest.mark.parametrize("name", sorted(extras.EXTRAS))
def test_each_extra_says_how_to_install_it(name):
    assert f".[{name}]" in extras.EXTRAS[name].install and extras.EXTRAS[name].modules
