"""The Node tools of the login tests (tests/e2e/oidc/): installed from the lock file on demand.

`npm ci` runs when node_modules is missing or older than package-lock.json, so `make test`
on a fresh machine installs exactly the pinned oidc-provider and jose itself.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

NODE_DIR = Path(__file__).resolve().parent / "oidc"


def node_tools() -> Path:
    """The folder holding provider.mjs and verify.mjs, with its dependencies installed."""
    return installed(NODE_DIR)


def installed(folder: Path) -> Path:
    """`folder` with the dependencies of its package-lock.json installed (`npm ci`).

    Two tiers of `make test` run side by side may both need one folder (the conformance
    tool: the end-to-end and the interop tiers): a lock lets one install while the other
    waits, so neither sees a half-written node_modules."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is required for the end-to-end tests (Node.js >= 20)")
    lock = folder / "package-lock.json"
    marker = folder / "node_modules" / ".package-lock.json"
    name = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    with open(Path(tempfile.gettempdir()) / f"memory-auth-npm-{name}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not marker.exists() or marker.stat().st_mtime < lock.stat().st_mtime:
            subprocess.run(
                ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
                cwd=folder, check=True, timeout=300,
            )
    return folder


def verify_with_jose(jwks_url: str, issuer: str, tokens: list[str]) -> list[dict[str, Any]]:
    """Each token as jose's jwtVerify with a remote JWKS judges it (tokens go via stdin)."""
    answer = subprocess.run(
        ["node", "verify.mjs", jwks_url, issuer],
        cwd=node_tools(), input=json.dumps(tokens), capture_output=True, text=True,
        check=True, timeout=60,
    )
    return list(json.loads(answer.stdout))
