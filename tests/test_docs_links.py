"""The front page stays a front page, and no link in the docs points nowhere.

README.md is at most 200 lines and links every page under docs/; every relative Markdown link in
README.md and docs/*.md names a file that exists, and a `#fragment` names a heading of that file
(GitHub's anchors); each docs page opens with a `# Title` and a summary paragraph.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PAGES = sorted((ROOT / "docs").glob("*.md"))
DOCUMENTS = [ROOT / "README.md", *PAGES]

FENCE = re.compile(r"^```.*?^```[ \t]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The text a reader sees as prose: code blocks and inline code can hold brackets that are no links."""
    return INLINE_CODE.sub("code", FENCE.sub("", text))


def links(path: Path) -> list[str]:
    return LINK.findall(_prose(path.read_text(encoding="utf-8")))


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE)  # http:, https:, mailto:


def anchors(path: Path) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats numbered."""
    seen: dict[str, int] = {}
    out = set()
    for title in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def test_the_parsers_find_links_and_anchors_as_github_does(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "# Prevent or cure: `--constrain`\n\nsee [a](b.md#x), ![img](i.png) and `[no](link.md)`\n\n"
        "```\n[no](fenced.md)\n```\n## Again\n## Again\n",
        encoding="utf-8",
    )
    assert links(page) == ["b.md#x", "i.png"]
    assert anchors(page) == {"prevent-or-cure---constrain", "again", "again-1"}


def test_the_readme_is_a_front_page_that_links_every_docs_page():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200
    linked = {(ROOT / t.split("#")[0]).resolve() for t in links(ROOT / "README.md") if relative(t)}
    pages = {p.resolve() for p in PAGES}
    assert len(linked & pages) >= 3
    assert pages <= linked, f"not linked from README.md: {sorted(p.name for p in pages - linked)}"


@pytest.mark.parametrize("doc", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    broken = []
    for target in links(doc):
        if not relative(target):
            continue
        name, _, fragment = target.partition("#")
        file = (doc.parent / name).resolve() if name else doc
        if not file.exists():
            broken.append(f"{target}: no file {file}")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            broken.append(f"{target}: no heading #{fragment} in {file.name}")
    assert not broken, "\n".join(broken)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_docs_page_opens_with_a_title_and_a_summary(page):
    lines = page.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("# ") and len(lines[0]) > 2
    assert lines[1] == "" and lines[2] and not lines[2].startswith(("#", "```", "-", "|"))


def test_there_are_docs_pages():
    assert len(PAGES) >= 8
