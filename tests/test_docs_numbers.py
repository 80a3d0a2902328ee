"""Numbers in the docs that would go stale: a count of the project's own tests changes with every
round (docs/install.md said 851 when there were about 1,400), so no page states one; a measurement
names its date instead. The check can fail: it finds the sentence it forbids."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# "851 tests", "1,367 tests": a count of tests (not "the tests", "13 test tasks")
COUNT = re.compile(r"\b\d[\d,]*\s+tests\b")


def stale_counts(text: str) -> list[str]:
    return COUNT.findall(text)


def test_no_page_counts_the_projects_tests():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = {p.name: stale_counts(p.read_text(encoding="utf-8")) for p in pages}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_finds_a_count():
    assert stale_counts("a fresh clone of this round's tree (851 tests), and 1,367 tests later") == [
        "851 tests",
        "1,367 tests",
    ]
    assert stale_counts("the tests marked extra; 13 test tasks") == []
