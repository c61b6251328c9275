"""docs/architecture.md's table of the imports inside functions, held against the code.

Every import inside a function of chalicelib is there to keep a cold start small; the table
says, module by module, how many there are and what they wait for. A module that gains one,
or loses its last, fails here until the table says so.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
CHALICELIB = PROJECT / "chalicelib"
ARCHITECTURE = (PROJECT / "docs" / "architecture.md").read_text()


def imports_inside_functions() -> Counter[str]:
    """Per module (relative to chalicelib/), its import statements inside a function."""
    found: Counter[str] = Counter()
    for path in sorted(CHALICELIB.rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found[str(path.relative_to(CHALICELIB))] += 1
    return found


def nested_twice() -> int:
    """Imports inside a function inside a function, counted once per enclosing function."""
    found = 0
    for path in sorted(CHALICELIB.rglob("*.py")):
        for outer in ast.walk(ast.parse(path.read_text())):
            if isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(outer):
                    if inner is not outer and isinstance(
                        inner, ast.FunctionDef | ast.AsyncFunctionDef
                    ):
                        found += sum(
                            isinstance(n, ast.Import | ast.ImportFrom) for n in ast.walk(inner)
                        )
    return found


def documented() -> dict[str, int]:
    table = ARCHITECTURE.split("| Where | How many |", 1)[1].split("\n\n", 1)[0]
    counts: dict[str, int] = {}
    for row in table.splitlines()[2:]:
        where, how_many = row.split("|")[1:3]
        names = re.findall(r"`([\w/]+\.py)`", where)
        numbers = [int(n) for n in how_many.split(",")]
        assert len(names) == len(numbers), row
        counts.update(zip(names, numbers, strict=True))
    return counts


def test_the_architecture_table_lists_every_import_inside_a_function() -> None:
    assert nested_twice() == 0  # else the count above would count them twice
    assert documented() == dict(imports_inside_functions())


def test_the_architecture_page_gives_their_total_and_modules() -> None:
    found = imports_inside_functions()
    said = re.search(r"Imports inside functions: (\d+), in (\d+) modules", ARCHITECTURE)

    assert said is not None
    assert (int(said.group(1)), int(said.group(2))) == (sum(found.values()), len(found))
