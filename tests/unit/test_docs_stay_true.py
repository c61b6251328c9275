"""Docs that list what the code defines: held to the code, so that a new event type or a
change of the README's task table cannot leave them behind."""

from __future__ import annotations

import re

from chalicelib.events.model import TYPES
from infra.template import PROJECT_DIR

DOCS = PROJECT_DIR / "docs"


def test_the_audit_events_guide_lists_every_event_type_with_its_data() -> None:
    text = (DOCS / "guides" / "audit-events.md").read_text()
    rows = dict(re.findall(r"^\| `([a-z_]+\.[a-z_]+)` \|(.*)\|\s*$", text, re.MULTILINE))

    assert set(rows) == set(TYPES), "docs/guides/audit-events.md: one row per event type"


def test_the_home_page_has_the_readmes_task_table() -> None:
    readme = (PROJECT_DIR / "README.md").read_text()
    table = re.search(r"^\| I want to… \| Read \|\n(?:\|.*\n)+", readme, re.MULTILINE)
    assert table is not None

    home = (DOCS / "index.md").read_text()
    assert table.group(0).replace("](docs/", "](") in home


def test_cors_is_in_the_navigation_and_the_task_table() -> None:
    assert "guides/cors.md" in (PROJECT_DIR / "mkdocs.yml").read_text()
    assert "(docs/guides/cors.md)" in (PROJECT_DIR / "README.md").read_text()
