"""The delegation examples, run as a user would against the local stack: a server minting a
browser token with read scopes, and an agent handing a sub-agent a narrower token."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest

from memory_sdk import MemoryClient
from tests.e2e.conftest import Stack, child_environment

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

EXAMPLES = Path(__file__).resolve().parents[4] / "examples" / "delegation"
SECRET = re.compile(r"(?:svc|legacy)_[A-Za-z0-9]{8,}|eyJ[A-Za-z0-9_-]{10,}")


async def run(example: str, key: str, stack: Stack) -> str:
    env = child_environment(MEMORY_ENDPOINT=stack.endpoint, MEMORY_API_KEY=key)
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [sys.executable, str(EXAMPLES / example)], env=env, check=False
        )
    stdout, stderr = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, stderr[-2000:]
    assert not SECRET.search(stdout + stderr)
    return stdout


async def workspace_key(user: MemoryClient, stack: Stack) -> str:
    created = await user.auth.create_api_key(
        "e2e delegation", category="workspace", workspace_id=stack.workspace_id
    )
    assert created.key is not None
    return created.key.get_secret_value()


async def test_the_server_mints_a_read_only_browser_token(
    user: MemoryClient, stack: Stack
) -> None:
    stdout = await run("browser_token.py", await workspace_key(user, stack), stack)

    assert "1. minted a browser token: scopes memory entities, 300 s" in stdout
    assert f"2. the browser is: delegated in {stack.workspace_id}" in stdout
    assert "{'sub': 'browser'}" in stdout
    assert "3. it may not manage keys: 403 insufficient_scope" in stdout


async def test_the_agent_hands_a_sub_agent_a_narrower_token(
    user: MemoryClient, stack: Stack
) -> None:
    stdout = await run("sub_agent_token.py", await workspace_key(user, stack), stack)

    assert "1. the agent handed on: memory reasoning, 600 s" in stdout
    assert "2. the sub-agent handed on: memory," in stdout
    assert "3. it may not widen its scopes: 400 invalid_scope" in stdout
    assert "4. the helper is: delegated, scopes memory" in stdout
    assert "{'sub': 'helper', 'act': {'sub': 'sub-agent'}}" in stdout
