"""A slow command's steps (`report`, `plot`) are said on stderr to a person at a terminal, and not at
all elsewhere (a log, a pipe, a test), where an error must stay the one line it is."""

from __future__ import annotations

from harness.progress import steps


def test_steps_are_said_at_a_terminal_only(capsys, monkeypatch):
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    steps("report")("reading the records of 2 run folders")
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("FORCE_COLOR", "1")  # rich's own switch: a terminal
    steps("report")("reading the records of 2 run folders")
    assert "report: reading the records of 2 run folders…" in capsys.readouterr().err
    steps("")("nothing")  # a format a program reads
    assert capsys.readouterr().err == ""
