"""The README reads as one document: one runbook per operation, links that resolve."""

from __future__ import annotations

import re

from infra.template import PROJECT_DIR

README = (PROJECT_DIR / "README.md").read_text()


def headings() -> list[str]:
    return [line.lstrip("#").strip() for line in README.splitlines() if line.startswith("#")]


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lowercase, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def test_signing_key_rotation_has_exactly_one_runbook() -> None:
    about_signing_rotation = [
        h for h in headings() if "signing" in h.lower() and "rotat" in h.lower()
    ]

    assert about_signing_rotation == ["Runbook: rotating the signing key"]


def test_every_in_page_link_names_a_heading() -> None:
    anchors = {anchor(h) for h in headings()}
    links = set(re.findall(r"\]\(#([^)]+)\)", README))

    assert sorted(links - anchors) == []
