"""The README is short and points by task into docs/; the docs hold one runbook per operation."""

from __future__ import annotations

import json
import re

from infra.template import PROJECT_DIR

README = (PROJECT_DIR / "README.md").read_text()
DOCS = PROJECT_DIR / "docs"
README_MAX_LINES = 250


def headings(text: str) -> list[str]:
    """The Markdown headings of `text`, outside fenced code blocks."""
    found, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found


def docs_headings() -> list[str]:
    return [h for page in sorted(DOCS.rglob("*.md")) for h in headings(page.read_text())]


def test_readme_is_at_most_250_lines() -> None:
    assert len(README.splitlines()) <= README_MAX_LINES


def test_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```sh", 1)[1].split("```", 1)[0]

    assert re.findall(r"^make (\w+)", first_block, re.MULTILINE) == ["run", "test"]


def test_readme_says_to_copy_the_commands_the_banner_prints() -> None:
    assert "Copy the commands the banner prints" in headings(README)
    assert "PORT=0 make run" in README


def test_readme_has_the_three_recipes() -> None:
    assert {"A workspace key with curl", "The SDKs", "A headless MCP client"} <= set(
        headings(README)
    )


def test_signing_key_rotation_has_exactly_one_runbook() -> None:
    about_signing_rotation = [
        h for h in docs_headings() + headings(README)
        if "signing" in h.lower() and "rotat" in h.lower()
    ]

    assert about_signing_rotation == ["Runbook: rotating the signing key"]


def test_the_deploy_page_lists_every_template_parameter() -> None:
    parameters = json.loads((PROJECT_DIR / "infra" / "resources.json").read_text())["Parameters"]
    deploy = (DOCS / "operations" / "deploy.md").read_text()

    missing = [name for name in parameters if f"| `{name}` |" not in deploy]
    assert missing == []
    overrides = deploy.split("--parameter-overrides", 1)[1].split("--tags", 1)[0]
    assert sorted(re.findall(r"(\w+)=", overrides)) == sorted(parameters)
