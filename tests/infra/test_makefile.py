"""The Makefile a newcomer meets first: `make help` names everything, `make run` installs
only what the local stack needs, every install checks the locks' hashes, and an old Node is
named."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from infra.template import PROJECT_DIR
from tests.lanes import PHASES

MAKEFILE = (PROJECT_DIR / "Makefile").read_text()
# Tools a running service never imports: `make run` must not wait for them. (cfn-lint comes
# with moto's server, httpx with mcp: the local stack installs them all the same.)
DEVELOPMENT_ONLY = {"ruff", "mypy", "pytest", "schemathesis", "playwright", "hypothesis"}
NODE_PACKAGES = ["sdks/typescript", "dashboard", "tests/e2e/oidc", "tests/e2e/mcp_sdk"]


def make(*arguments: str, env: dict[str, str] | None = None) -> str:
    return make_run(*arguments, env=env).stdout


def make_run(
    *arguments: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *arguments],
        cwd=PROJECT_DIR, capture_output=True, text=True, check=True, timeout=60, env=env,
    )


def phony_targets() -> set[str]:
    declared = re.search(r"^\.PHONY:((?:.*\\\n)*.*)$", MAKEFILE, re.MULTILINE)
    assert declared is not None
    return set(declared.group(1).replace("\\\n", " ").split())


def test_help_lists_every_target() -> None:
    shown = make("help")

    missing = [t for t in sorted(phony_targets()) if f"make {t} " not in shown + " "]
    assert missing == []


def test_help_lists_every_variable() -> None:
    shown = make("help")
    assigned = set(re.findall(r"^([A-Z_]+) \?=", MAKEFILE, re.MULTILINE))
    # What the local stack reads from the environment (local/stack.py).
    read_by_run = {
        "PORT", "IDP_PORT", "MOTO_PORT", "TRUSTED_ISSUERS", "ALLOWED_ORIGINS", "REGIONS"
    }
    used = set(re.findall(r"\$\((ARGS|STAGE|DEPLOY_BUCKET|AWS_REGION)\)", MAKEFILE))

    # A whole name: REGIONS is not listed by REPLICA_REGIONS' line.
    missing = [
        v
        for v in sorted(assigned | read_by_run | used)
        if not re.search(rf"(?<![A-Z_]){v}(?![A-Z_])", shown)
    ]
    assert missing == []


def requirement_names(path: Path) -> set[str]:
    """What an .in file declares (the locks add what those bring)."""
    names: set[str] = set()
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("-r "):
            names |= requirement_names(path.parent / line[3:].strip())
        elif line:
            names.add(re.split(r"[\[=<>~ ]", line, maxsplit=1)[0].lower())
    return names


def test_run_installs_only_the_service_and_the_local_stack(tmp_path: Path) -> None:
    planned = make("-n", "run", f"VENV={tmp_path / 'venv'}")

    installs = re.findall(r"pip install .*-r (\S+)", planned)
    assert installs == ["requirements-local.txt"]
    assert not requirement_names(PROJECT_DIR / "requirements-local.in") & DEVELOPMENT_ONLY
    assert {"chalice", "moto", "boto3"} <= requirement_names(PROJECT_DIR / "requirements-local.in")


def test_run_shows_progress_while_it_installs(tmp_path: Path) -> None:
    planned = make("-n", "run", f"VENV={tmp_path / 'venv'}")
    install = next(line for line in planned.splitlines() if "-r requirements-local.txt" in line)

    assert "--quiet" not in install and " -q" not in install
    assert "==> installing" in planned


def test_every_install_checks_the_hashes_of_its_lock(tmp_path: Path) -> None:
    planned = make("-n", "venv", f"VENV={tmp_path / 'venv'}")
    planned += make("-n", "lock", f"LOCK_VENV={tmp_path / 'lock'}")

    installs = [line for line in planned.splitlines() if "pip install" in line]
    assert [re.findall(r"-r (\S+)", line) for line in installs] == [
        ["requirements-local.txt"], ["requirements-dev.txt"], ["requirements-lock.txt"]
    ]
    assert all("--require-hashes" in line for line in installs), installs


def test_the_python_sdks_install_fetches_nothing_unhashed(tmp_path: Path) -> None:
    planned = subprocess.run(
        ["make", "--no-print-directory", "-n", "-C", "sdks/python", "install",
         f"PYTHON={tmp_path / 'python'}"],
        cwd=PROJECT_DIR, capture_output=True, text=True, timeout=60,
    ).stdout

    installs = [line for line in planned.splitlines() if "pip install" in line]
    assert installs, planned
    for line in installs:
        assert {"--no-index", "--no-deps", "--no-build-isolation"} <= set(line.split()), line


def test_the_python_sdks_dependencies_and_build_backend_are_in_the_dev_lock() -> None:
    import tomllib

    from packaging.requirements import Requirement

    pyproject = tomllib.loads((PROJECT_DIR / "sdks/python/pyproject.toml").read_text())
    needed = [
        *pyproject["build-system"]["requires"],
        *pyproject["project"]["dependencies"],
        *pyproject["project"]["optional-dependencies"]["test"],
    ]
    locked = dict(
        re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (PROJECT_DIR / "requirements-dev.txt").read_text(),
                   re.MULTILINE)
    )
    locked = {name.lower().replace("_", "-"): version for name, version in locked.items()}

    for line in needed:
        requirement = Requirement(line)
        name = requirement.name.lower().replace("_", "-")
        assert name in locked, f"{name} is not in requirements-dev.txt"
        assert requirement.specifier.contains(locked[name]), f"{line} vs {locked[name]}"


def test_lock_compiles_each_in_file_with_hashes_for_lambdas_platform(tmp_path: Path) -> None:
    planned = make("-n", "lock", f"LOCK_VENV={tmp_path / 'lock'}")

    compiles = [line for line in planned.splitlines() if " pip compile " in line]
    outputs = sorted(re.findall(r" -o (\S+)", "\n".join(compiles)))
    assert outputs == [
        "requirements-dev.txt", "requirements-docs.txt", "requirements-local.txt",
        "requirements-lock.txt", "requirements.txt",
    ]
    for line in compiles:
        assert "--generate-hashes" in line
        assert "--python-platform x86_64-manylinux_2_28 --python-version 3.13" in line
    # The development lock is held to the Lambda's, the local one to the development one.
    assert "requirements-dev.in -c requirements.txt" in planned
    assert "requirements-local.in -c requirements-dev.txt" in planned
    assert "requirements-docs.in -c requirements-dev.txt" in planned


def test_docs_build_with_tools_of_their_own_not_in_the_services_virtualenv(
    tmp_path: Path,
) -> None:
    planned = make("-n", "-B", "docs", f"DOCS_VENV={tmp_path / 'docs'}")

    assert f"{tmp_path / 'docs'}/bin/python -m pip install" in planned
    assert "-r requirements-docs.txt" in planned
    assert "-r requirements-dev.txt" not in planned
    assert f"{tmp_path / 'docs'}/bin/mkdocs build --strict" in planned


def fake_node(directory: Path, version: str) -> dict[str, str]:
    node = directory / "node"
    node.write_text(f"#!/bin/sh\necho {version}\n")
    node.chmod(0o755)
    return {**os.environ, "PATH": f"{directory}{os.pathsep}{os.environ['PATH']}"}


def test_an_older_node_on_the_path_is_warned_about_without_failing(tmp_path: Path) -> None:
    checked = make_run("node-version", env=fake_node(tmp_path, "20.20.2"))

    warning = "WARNING: Node 20.20.2 is on the PATH; this project targets Node 22 LTS"
    assert warning in checked.stderr
    assert "end of life" in checked.stderr


def test_node_22_passes_the_check_silently(tmp_path: Path) -> None:
    checked = make_run("node-version", env=fake_node(tmp_path, "22.23.3"))

    assert checked.stderr == ""


def test_every_target_that_runs_node_checks_its_version(tmp_path: Path) -> None:
    for target in ["run", "package", "test-e2e", "test-sdk-typescript", "test-dashboard"]:
        planned = make("-n", target, f"VENV={tmp_path / 'venv'}")

        assert "process.versions.node" in planned, target


def test_every_node_package_declares_node_22() -> None:
    for package in NODE_PACKAGES:
        manifest = json.loads((PROJECT_DIR / package / "package.json").read_text())

        assert manifest["engines"] == {"node": ">=22"}, package


def test_test_runs_every_tier_and_builds_the_docs_site_strictly(tmp_path: Path) -> None:
    planned = make("-n", "test", f"VENV={tmp_path / 'venv'}")
    commands = [tier.command for lanes in PHASES for lane in lanes for tier in lane]

    assert "tests.lanes" in planned
    assert sorted(command[2] for command in commands) == sorted(
        ["lint", "test-unit", "test-functional", "test-contract", "test-contract", "test-e2e",
         "test-sdk-python", "test-infra", "test-sdk-typescript", "test-dashboard", "docs",
         "test-interop"]
    )
    assert {command[3] for command in commands if command[2] == "test-contract"} == {
        "ARGS=--credential admin", "ARGS=--credential user",
    }
    documented = make("-n", "docs", f"VENV={tmp_path / 'venv'}")
    assert "mkdocs build --strict" in documented
    assert "tools.api_reference build/openapi.json --check" in documented


def test_no_two_tiers_build_the_same_thing_at_once() -> None:
    """The TypeScript SDK's tests rebuild the dist/ the dashboard bundles and reinstall its
    node_modules: the infra tests (they package the dashboard's build) follow them in their
    lane, and the dashboard's tests wait for them."""
    lanes = PHASES[-1]
    typescript = next(lane for lane in lanes if any(t.name == "sdk-typescript" for t in lane))
    order = [tier.name for tier in typescript]
    dashboard = next(tier for lane in lanes for tier in lane if tier.name == "dashboard")

    assert order.index("sdk-typescript") < order.index("infra")
    assert dashboard.after == "sdk-typescript"


def test_the_functional_tier_runs_alone() -> None:
    """It uses every core (pytest-xdist)."""
    phase = next(lanes for lanes in PHASES if any(lane[0].name == "functional" for lane in lanes))

    assert [[tier.name for tier in lane] for lane in phase] == [["functional"]]


def test_docs_starts_no_service_and_builds_no_dashboard(tmp_path: Path) -> None:
    planned = make("-n", "docs", f"VENV={tmp_path / 'venv'}")

    assert "mkdocs build --strict" in planned
    assert "dashboard" not in planned and "local.stack" not in planned


def test_help_ends_no_sentence_in_the_middle() -> None:
    described = [line[27:] for line in make("help").splitlines() if line.startswith("  make ")]
    continued = [line[27:] for line in make("help").splitlines() if line.startswith(" " * 27)]

    dangling = [text for text in described + continued if re.search(r"(\w's|\w+s')$", text)]
    assert dangling == []
