"""docs/architecture.md's code map, held against the tree and the layers `make lint` checks.

The map is the one place the code is described module by module: a module it does not name,
or a layer it lists out of order, fails here rather than misleading the next reader.
"""

from __future__ import annotations

import itertools
import re
import tomllib
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
CHALICELIB = PROJECT / "chalicelib"
ARCHITECTURE = (PROJECT / "docs" / "architecture.md").read_text()
CODE_MAP = ARCHITECTURE.split("## Code map", 1)[1].split("```", 2)[1]


def entries() -> list[tuple[str, str]]:
    """(names, text) of each top-level entry of the map: names as written in its first
    column ("keys/", "clock.py, ids.py, logs.py"), text with its indented lines."""
    found: list[tuple[str, str]] = []
    for line in CODE_MAP.splitlines():
        top = re.match(r"^  ([^\s,]+(?:, [^\s,]+)*)(?:\s|$)", line)
        if top:
            found.append((top.group(1), line))
        elif found and line.startswith("    "):
            names, text = found[-1]
            found[-1] = (names, text + "\n" + line)
    return found


def top_level_names() -> list[str]:
    return [name.strip() for names, _ in entries() for name in names.split(",")]


def modules() -> list[Path]:
    return sorted(
        path.relative_to(CHALICELIB)
        for path in CHALICELIB.rglob("*.py")
        if path.name != "__init__.py" and "static" not in path.parts
    )


def test_the_code_map_names_every_module_of_chalicelib() -> None:
    by_package = {names: text for names, text in entries() if names.endswith("/")}
    names = top_level_names()
    unnamed = []
    for module in modules():
        if len(module.parts) == 1:
            named = module.name in names
        else:
            text = by_package.get(module.parts[0] + "/", "")
            named = re.search(rf"(?<![\w/]){re.escape(module.name)}\b", text) is not None
        if not named:
            unnamed.append(str(module))
    assert unnamed == []


def test_the_code_map_lists_the_packages_in_the_order_of_the_import_layers() -> None:
    config = tomllib.loads((PROJECT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["type"] == "layers"]
    names = top_level_names()
    positions = []
    for layer in layers:
        members = [m.strip() for m in re.split(r"[|:]", layer)]
        spelled = [m + "/" if (CHALICELIB / m).is_dir() else m + ".py" for m in members]
        positions.append(sorted(names.index(name) for name in spelled))
    assert positions == sorted(positions)
    assert all(b[0] > a[-1] for a, b in itertools.pairwise(positions))
