"""The local stack (`python -m local.stack`), started once per test session, over real HTTP."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memory_sdk import MemoryClient

REPO_ROOT = Path(__file__).resolve().parents[4]
STARTUP_SECONDS = 60.0


@dataclass(frozen=True)
class Stack:
    endpoint: str
    user_id: str
    workspace_id: str
    token: str
    ready: dict[str, Any]

    def __repr__(self) -> str:  # the token stays out of pytest's output
        return f"Stack(endpoint={self.endpoint!r}, workspace_id={self.workspace_id!r})"


def digest(secret: str) -> str:
    """Tests compare secrets through their hashes, never as plaintext in an assert."""
    return hashlib.sha256(secret.encode()).hexdigest()


def _read_ready(path: Path) -> dict[str, Any] | None:
    try:
        ready = json.loads(path.read_text())
    except (OSError, ValueError):
        return None  # not written yet, or half written
    return ready if isinstance(ready, dict) else None


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    with tempfile.TemporaryDirectory(prefix="memory-sdk-e2e-") as scratch:
        ready_file = Path(scratch) / "stack.json"
        errors = (Path(scratch) / "stack.err").open("wb")
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "local.stack",
                "--port",
                "0",
                "--quiet",
                "--ready-file",
                str(ready_file),
            ],
            cwd=REPO_ROOT,
            stdout=subprocess.DEVNULL,  # its banner prints the user token
            stderr=errors,
        )
        try:
            deadline = time.monotonic() + STARTUP_SECONDS
            ready = _read_ready(ready_file)
            while ready is None:
                if process.poll() is not None or time.monotonic() > deadline:
                    errors.flush()
                    tail = (Path(scratch) / "stack.err").read_text(errors="replace")[-2000:]
                    pytest.fail(f"the local stack did not start:\n{tail}", pytrace=False)
                time.sleep(0.1)
                ready = _read_ready(ready_file)
            yield Stack(
                endpoint=ready["endpoint"],
                user_id=ready["userId"],
                workspace_id=ready["workspaceId"],
                token=ready["token"],
                ready=ready,
            )
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)  # it stops moto too
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            errors.close()


@pytest.fixture
async def user(stack: Stack) -> AsyncIterator[MemoryClient]:
    """A client signed in with the development user's token."""
    async with MemoryClient(endpoint=stack.endpoint, access_token=stack.token) as client:
        yield client


@pytest.fixture
def sdk_environment(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> None:
    """MEMORY_ENDPOINT and MEMORY_WORKSPACE_ID for the stack, as a user would export them."""
    monkeypatch.setenv("MEMORY_ENDPOINT", stack.endpoint)
    monkeypatch.setenv("MEMORY_WORKSPACE_ID", stack.workspace_id)


def child_environment(**variables: str) -> dict[str, str]:
    """This process's environment without SDK variables, plus `variables`."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.upper().startswith(("MEMORY_", "NAM_")) and name != "GRAPHDB_PASSWORD"
    }
    env.update(variables)
    return env
