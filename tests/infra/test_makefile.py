"""The Makefile a newcomer meets first: `make help` names everything, `make run` installs
only what the local stack needs."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from infra.template import PROJECT_DIR

MAKEFILE = (PROJECT_DIR / "Makefile").read_text()
# Tools a running service never imports: `make run` must not wait for them.
DEVELOPMENT_ONLY = {"ruff", "mypy", "pytest", "cfn-lint", "schemathesis", "httpx"}


def make(*arguments: str) -> str:
    return subprocess.run(
        ["make", "--no-print-directory", *arguments],
        cwd=PROJECT_DIR, capture_output=True, text=True, check=True, timeout=60,
    ).stdout


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
    read_by_run = {"PORT", "IDP_PORT", "MOTO_PORT", "TRUSTED_ISSUERS", "ALLOWED_ORIGINS"}
    used = set(re.findall(r"\$\((ARGS|STAGE|DEPLOY_BUCKET|AWS_REGION)\)", MAKEFILE))

    missing = [v for v in sorted(assigned | read_by_run | used) if v not in shown]
    assert missing == []


def requirement_names(path: Path) -> set[str]:
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
    assert not requirement_names(PROJECT_DIR / "requirements-local.txt") & DEVELOPMENT_ONLY
    assert {"chalice", "moto", "boto3"} <= requirement_names(PROJECT_DIR / "requirements-local.txt")


def test_run_shows_progress_while_it_installs(tmp_path: Path) -> None:
    planned = make("-n", "run", f"VENV={tmp_path / 'venv'}")
    install = next(line for line in planned.splitlines() if "-r requirements-local.txt" in line)

    assert "--quiet" not in install and " -q" not in install
    assert "==> installing" in planned
