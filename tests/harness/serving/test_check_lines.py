"""`check`'s lines fit the terminal (80 columns at most): a long detail and its fix wrap under themselves."""

from __future__ import annotations

from harness.serving import check_lines


def test_a_long_detail_and_its_fix_wrap_within_80_columns():
    detail = "the template renders tool results as " + "a long explanation " * 6
    lines = check_lines("tool_result", "warn", detail, "serve with --chat-template-kwargs " + "x " * 30, 80)
    assert len(lines) > 2 and max(len(line) for line in lines) <= 80
    assert lines[0].startswith("  tool_result  warn  the template")
    assert any(line.lstrip().startswith("fix: serve with") for line in lines)
    assert " ".join(" ".join(lines).split()).count("a long explanation") == 6  # nothing lost
    assert check_lines("determinism", "ok", "same answer twice", None, 80) == ["  determinism  ok    same answer twice"]
