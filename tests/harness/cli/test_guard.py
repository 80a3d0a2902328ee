"""The one guard: each failure kind is one line on stderr with its exit code; a bug keeps its traceback."""

import pytest
from typer.testing import CliRunner

from envs.errors import UserError
from envs.textworld.errors import GameGenerationError
from harness.cli import app
from harness.cli.common import group
from harness.errors import ServerStartError
from harness.rundir.store import RunDirError
from harness.serving.server_proc import MissingExtra
from harness.serving.vllm.presets import VllmConfigError
from harness.spec import SpecError
from results import RecordsError, UsageError


def test_every_bad_input_error_is_a_user_error():
    for kind in (SpecError, RunDirError, VllmConfigError, MissingExtra, RecordsError, UsageError):
        assert issubclass(kind, UserError), kind


def _failing(exc: Exception):
    demo = group()

    @demo.command("a")
    def a() -> None:
        raise exc

    @demo.command("b")
    def b() -> None:  # a second command keeps `demo` a group, as every mounted module is
        pass

    return CliRunner().invoke(demo, ["a"])


@pytest.mark.parametrize(
    ("exc", "line", "code"),
    [
        (UserError("bad [value] 'x'; allowed: y"), "error: bad [value] 'x'; allowed: y\n", 2),
        (MissingExtra("pip install 'repair-harness[vllm]'"), "error: pip install 'repair-harness[vllm]'\n", 2),
        (GameGenerationError("seed 3: no quest"), "generation failed: seed 3: no quest\n", 1),
        (ServerStartError("the server exited on its own."), "error: the server exited on its own.\n", 1),
    ],
)
def test_a_failure_is_one_line_and_its_exit_code(exc, line, code):
    res = _failing(exc)
    assert res.exit_code == code and res.stderr == line and res.stdout == ""


def test_a_bug_is_not_swallowed():
    res = _failing(KeyError("oops"))
    assert res.exit_code == 1 and isinstance(res.exception, KeyError)


def test_a_command_of_a_mounted_group_runs_under_the_guard():
    res = CliRunner().invoke(app, ["reproduce", "paper", "--model", "m", "--lane", "nope"])
    assert res.exit_code == 2 and res.stderr == "error: unknown lane 'nope'; allowed: primary, budget, sampling\n"
