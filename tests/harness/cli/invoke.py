"""The CLI run in this process at 80 columns: its result and everything it printed."""

from typer.testing import CliRunner

from harness.cli import app

runner = CliRunner()


def invoke(*args, env=None):
    result = runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "80", **(env or {})})
    return result, result.stdout + (result.stderr if hasattr(result, "stderr") else "")
