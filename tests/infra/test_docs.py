"""The docs site: every relative link in every Markdown file of the repository resolves, the
site's navigation holds every page, the API reference page is what the OpenAPI document
gives, and the docs cite nothing outside the repository."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from infra.template import PROJECT_DIR
from tools.api_reference import render, slug

DOCS = PROJECT_DIR / "docs"
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def tracked_markdown() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.md"],
        cwd=PROJECT_DIR, capture_output=True, text=True, check=True,
    ).stdout.split()
    return [PROJECT_DIR / name for name in listed if (PROJECT_DIR / name).is_file()]


def prose(text: str) -> str:
    """`text` without fenced code blocks and inline code, where brackets are not links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.add(slug(re.sub(r"`", "", line.lstrip("#").strip())))
    return found


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("/"):
            continue  # another site, a mail address, or a path on the service's own origin
        path, _, fragment = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        heading_missing = (
            resolved.exists() and resolved.suffix == ".md" and bool(fragment)
            and fragment not in anchors(resolved)
        )
        if not resolved.exists() or heading_missing:
            broken.append(target)
    return broken


def nav_pages(config: str) -> set[str]:
    """The pages `nav` lists in mkdocs.yml (one `- Title: page.md` per line, after `nav:`)."""
    nav = config.split("\nnav:\n", 1)[1]
    return set(re.findall(r'^\s+- (?:"[^"\n]+"|[^:\n]+): (\S+\.md)$', nav, re.MULTILINE))


def test_every_relative_link_in_every_markdown_file_resolves() -> None:
    pages = tracked_markdown()
    broken = {
        str(page.relative_to(PROJECT_DIR)): links
        for page in pages if (links := broken_links(page))
    }

    assert {"README.md", "sdks/python/README.md", "docs/index.md"} <= {
        str(p.relative_to(PROJECT_DIR)) for p in pages
    }
    assert broken == {}


def test_a_link_to_a_missing_file_or_heading_is_found(tmp_path: Path) -> None:
    (tmp_path / "there.md").write_text("# A heading\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md#a-heading) [gone](missing.md) [no such heading](there.md#nope)"
        " [here](#nowhere) `[code](not-a-link.md)` [web](https://example.com)\n"
    )

    assert broken_links(page) == ["missing.md", "there.md#nope", "#nowhere"]


def test_the_navigation_holds_every_docs_page() -> None:
    config = (PROJECT_DIR / "mkdocs.yml").read_text()
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}

    assert re.search(r"^strict: true$", config, re.MULTILINE)
    assert len(nav_pages(config)) > 20
    assert sorted(pages - nav_pages(config)) == []


def test_the_api_reference_page_is_what_the_openapi_document_gives(tmp_path: Path) -> None:
    document = tmp_path / "openapi.json"
    subprocess.run(
        [sys.executable, "-m", "tools.openapi", str(document)],
        cwd=PROJECT_DIR, capture_output=True, check=True,
    )
    expected = render(json.loads(document.read_text()))

    assert (DOCS / "reference" / "api.md").read_text() == expected


def test_the_docs_cite_nothing_outside_the_repository() -> None:
    outside = ("shared" "/spec", "decisions" ".md", "auth-spec" ".md", "/work/")
    citing = [
        str(page.relative_to(PROJECT_DIR))
        for page in tracked_markdown()
        if any(name in page.read_text() for name in outside)
    ]

    assert citing == []
