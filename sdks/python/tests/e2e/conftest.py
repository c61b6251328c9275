"""The repository's local stack, started once per test session, over real HTTP.

It is started the way every suite of the repository starts it: `running_stack()` in
local/running.py, imported from the repository root three levels up.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import os
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memory_sdk import MemoryClient

REPO_ROOT = Path(__file__).resolve().parents[4]


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


def _local_stack() -> Any:
    """The repository's local/running.py (appended to the path: nothing here is shadowed)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.append(str(REPO_ROOT))
    return importlib.import_module("local.running")


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    local = _local_stack()
    with contextlib.ExitStack() as running:
        try:
            ready: dict[str, Any] = running.enter_context(local.running_stack())
        except local.StackDidNotStart as failed:
            pytest.fail(str(failed), pytrace=False)
        yield Stack(
            endpoint=ready["endpoint"],
            user_id=ready["userId"],
            workspace_id=ready["workspaceId"],
            token=ready["token"],
            ready=ready,
        )


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
