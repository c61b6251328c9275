"""docs/architecture.md's table of the folders never deployed, and its test section, held
against the tree: a folder, a module of `local/` or `tools/`, or a folder of `tests/` that the
page does not name fails here rather than leaving the next reader to guess."""

from __future__ import annotations

import subprocess
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
ARCHITECTURE = (PROJECT / "docs" / "architecture.md").read_text()
FOLDERS = ARCHITECTURE.split("| Folder | What it holds |", 1)[1].split("\n\n", 1)[0]
TESTS = ARCHITECTURE.split("## Tests", 1)[1]


def tracked() -> list[str]:
    listed = subprocess.run(
        ["git", "ls-files"], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    return listed.stdout.splitlines()


def test_every_top_level_folder_but_chalicelib_has_a_row() -> None:
    folders = {path.split("/", 1)[0] for path in tracked() if "/" in path}
    hidden_or_deployed = {f for f in folders if f.startswith(".")} | {"chalicelib"}

    missing = [f for f in sorted(folders - hidden_or_deployed) if f"| `{f}/` |" not in FOLDERS]
    assert missing == []


def test_every_module_of_local_and_tools_is_named() -> None:
    modules = [
        path for path in tracked()
        if path.startswith(("local/", "tools/")) and path.endswith(".py")
        and not path.endswith("__init__.py")
    ]

    missing = [path for path in modules if f"`{path.split('/', 1)[1]}`" not in FOLDERS]
    assert missing == []


def test_every_folder_of_tests_is_named() -> None:
    folders = {
        "/".join(path.split("/")[:2]) for path in tracked()
        if path.startswith("tests/") and path.count("/") >= 2
    }

    missing = [
        folder for folder in sorted(folders)
        if f"`{folder}/`" not in TESTS and f"`{folder}/<" not in TESTS
    ]
    assert missing == []
