"""The locked dependencies: the requirements*.in files declare what the project uses directly,
`make lock` compiles them into hashed locks (requirements*.txt), every install checks those
hashes, and the Lambda package vendors exactly the Lambda's lock."""

from __future__ import annotations

import ast
import re
import sys
import zipfile
from importlib.metadata import distributions, packages_distributions
from pathlib import Path

from infra.template import PROJECT_DIR
from tests.infra.conftest import Packaged
from tools.package import package_dir

LAMBDA_LOCK = PROJECT_DIR / "requirements.txt"
LOCAL_LOCK = PROJECT_DIR / "requirements-local.txt"
DEV_LOCK = PROJECT_DIR / "requirements-dev.txt"
LOCKS = [LAMBDA_LOCK, LOCAL_LOCK, DEV_LOCK, PROJECT_DIR / "requirements-lock.txt"]
# What the Lambda imports without vendoring it: `chalice package` writes its own runtime
# module into the package, and Lambda's Python runtime ships the SnapStart hooks.
PROVIDED_IN_LAMBDA = {"chalice", "snapshot-restore-py"}
# memory_sdk: our Python SDK (sdks/python, installed editable by `make test`), which the
# interop tests drive.
FIRST_PARTY = {"app", "chalicelib", "infra", "local", "tools", "tests", "bench", "memory_sdk"}
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==([^\s;\\]+)")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def lock_pins(path: Path) -> dict[str, str]:
    """name -> version of every requirement of a compiled lock."""
    pins = {}
    for line in path.read_text().splitlines():
        pinned = PIN.match(line)
        if pinned:
            pins[normalized(pinned.group(1))] = pinned.group(2)
    return pins


def declared(path: Path) -> dict[str, str | None]:
    """name -> version (None when unpinned) of what an .in file declares, -r included."""
    names: dict[str, str | None] = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            names |= declared(path.parent / line[3:].strip())
        elif line:
            name = re.split(r"[\[=<>~ ;]", line, maxsplit=1)[0]
            pinned = PIN.match(line)
            names[normalized(name)] = pinned.group(2) if pinned else None
    return names


def test_every_lock_pins_each_package_with_its_hashes() -> None:
    for lock in LOCKS:
        requirements = re.split(r"\n(?=[^\s#])", lock.read_text())
        entries = [r for r in requirements if r.strip() and not r.startswith("#")]

        assert entries, lock.name
        unhashed = [e.split()[0] for e in entries if not PIN.match(e) or "--hash=sha256:" not in e]
        assert unhashed == [], lock.name


def test_each_lock_holds_what_its_in_file_declares_at_the_declared_version() -> None:
    for lock in LOCKS:
        pins = lock_pins(lock)
        wanted = declared(lock.with_suffix(".in"))

        missing = sorted(set(wanted) - set(pins))
        stale = {n: (v, pins[n]) for n, v in wanted.items() if v and n in pins and pins[n] != v}
        assert (missing, stale) == ([], {}), f"{lock.name}: run `make lock`"


def test_the_locks_nest_and_agree_on_every_version_they_share() -> None:
    lambda_pins, local_pins, dev_pins = map(lock_pins, (LAMBDA_LOCK, LOCAL_LOCK, DEV_LOCK))

    assert lambda_pins.items() <= local_pins.items()
    assert local_pins.items() <= dev_pins.items()


def imported_distributions(*roots: str) -> dict[str, set[str]]:
    """The distributions (normalized) providing each third-party module imported under roots."""
    modules: set[str] = set()
    for root in roots:
        path = PROJECT_DIR / root
        for source in [path] if path.is_file() else path.rglob("*.py"):
            if "node_modules" in source.parts:  # npm packages may ship Python scripts
                continue
            for node in ast.walk(ast.parse(source.read_text())):
                if isinstance(node, ast.Import):
                    modules |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules.add(node.module.split(".")[0])
    providers = packages_distributions()
    return {
        module: {normalized(d) for d in providers.get(module, [])}
        for module in modules - FIRST_PARTY - set(sys.stdlib_module_names)
    }


def test_the_lambda_declares_every_package_it_imports() -> None:
    lambda_declared = set(declared(PROJECT_DIR / "requirements.in")) | PROVIDED_IN_LAMBDA

    imported = imported_distributions("app.py", "chalicelib")

    undeclared = {m: d for m, d in imported.items() if not d & lambda_declared}
    assert undeclared == {}


def test_every_package_the_project_imports_is_declared() -> None:
    everything = set(declared(PROJECT_DIR / "requirements-dev.in"))

    imported = imported_distributions(
        "app.py", "chalicelib", "infra", "local", "tools", "tests", "bench"
    )

    undeclared = {m: d for m, d in imported.items() if not d & everything}
    assert undeclared == {}


def command_providers() -> dict[str, str]:
    """command -> the distribution (normalized) that installed it in the virtualenv's bin/."""
    return {
        Path(str(file)).name: normalized(dist.metadata["Name"])
        for dist in distributions()
        for file in dist.files or []
        if Path(str(file)).parent.name == "bin"
    }


def test_every_tool_the_makefile_and_the_packaging_run_is_declared() -> None:
    makefile = (PROJECT_DIR / "Makefile").read_text()
    packaging = (PROJECT_DIR / "tools" / "package.py").read_text()
    commands = set(re.findall(r"\$\(BIN\)/([\w-]+)", makefile))
    commands |= set(re.findall(r'BIN_DIR / "([\w-]+)"', packaging))
    everything = set(declared(PROJECT_DIR / "requirements-dev.in"))

    providers = command_providers()

    assert {"openapi-spec-validator", "chalice", "cfn-lint", "ruff"} <= commands
    undeclared = {c: providers.get(c) for c in commands - {"python"}}
    assert {c: d for c, d in undeclared.items() if d not in everything} == {}


def vendored(archive: zipfile.ZipFile) -> dict[str, str]:
    """name -> version of each distribution unpacked at the top of a deployment package."""
    found = {}
    for name in archive.namelist():
        top = name.split("/", 1)[0]
        if top.endswith(".dist-info") and name == f"{top}/METADATA":
            metadata = archive.read(name).decode()
            field = dict(
                line.split(": ", 1) for line in metadata.splitlines()[:10] if ": " in line
            )
            found[normalized(field["Name"])] = field["Version"]
    return found


def test_the_deployment_package_vendors_exactly_the_lambda_lock(packaged: Packaged) -> None:
    with zipfile.ZipFile(package_dir(packaged.stage) / "deployment.zip") as archive:
        distributions = vendored(archive)

    assert distributions == lock_pins(LAMBDA_LOCK)
