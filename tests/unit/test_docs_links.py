"""Every relative link in README.md and docs/*.md leads somewhere: the file
exists, and an anchor into a Markdown file names one of its headings (as
GitHub makes anchors from headings). Links inside code blocks and code spans
are text, not links; http(s) and mailto links are not followed (no network).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Pages the README's docs map links before they exist on main (none now:
# docs/tracing.md came with the OpenTelemetry branch). Remove an entry once
# its page is merged.
NOT_YET_WRITTEN: set[str] = set()

_FENCE = re.compile(r"^\s*(```|~~~)")
_CODE_SPAN = re.compile(r"(`+).*?\1")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose_lines(text: str) -> list[str]:
    """The lines outside fenced code blocks, with code spans blanked."""
    lines: list[str] = []
    fenced = False
    for line in _HTML_COMMENT.sub("", text).splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(_CODE_SPAN.sub("", line))
    return lines


def links(text: str) -> list[str]:
    return [m.group(1) for line in _prose_lines(text) for m in _LINK.finditer(line)]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation
    dropped (hyphens and underscores kept), spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(page: Path, root: Path) -> list[str]:
    """What is wrong with each relative link of `page`, one line per link."""
    problems: list[str] = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
            continue  # http:, https:, mailto:
        path_part, _, fragment = target.partition("#")
        resolved = (page.parent / unquote(path_part)).resolve() if path_part else page
        shown = resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else target
        if not resolved.exists():
            if shown not in NOT_YET_WRITTEN:
                problems.append(f"{target}: no file {shown}")
            continue
        if fragment and resolved.suffix == ".md":
            if unquote(fragment) not in anchors(resolved.read_text(encoding="utf-8")):
                problems.append(f"{target}: no heading #{fragment} in {shown}")
    return problems


def _pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page: Path) -> None:
    assert broken_links(page, ROOT) == []


def test_the_readme_maps_every_docs_page() -> None:
    """The README is the way in: a page under docs/ that it does not link is
    a page nobody finds."""
    readme_targets = {t.partition("#")[0] for t in links((ROOT / "README.md").read_text())}
    unlinked = [
        p.relative_to(ROOT).as_posix()
        for p in sorted((ROOT / "docs").glob("*.md"))
        if p.relative_to(ROOT).as_posix() not in readme_targets
    ]
    assert unlinked == []
    assert NOT_YET_WRITTEN <= readme_targets


def test_the_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# A page\n\n## Two `words`, here\n")
    page = tmp_path / "README.md"
    page.write_text(
        "[ok](docs/a.md) [ok](docs/a.md#two-words-here) [self](#top)\n"
        "[gone](docs/b.md) [bad](docs/a.md#nowhere) [web](https://example.com/x)\n"
        "`[code](docs/c.md)`\n```\n[fenced](docs/d.md)\n```\n# Top\n"
    )
    assert broken_links(page, tmp_path) == [
        "docs/b.md: no file docs/b.md",
        "docs/a.md#nowhere: no heading #nowhere in docs/a.md",
    ]
