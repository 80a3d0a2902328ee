"""`python -m harness.cli`, the same as the `repair-harness` script."""

from harness.cli import app

app()
