"""The example script, run as a user would: configured by the environment, printing each step."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import anyio
import pytest

from memory_sdk import MemoryClient
from tests.e2e.conftest import Stack, child_environment

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "workspace_key_lifecycle.py"
PLAINTEXT = re.compile(r"(?:svc|legacy)_[A-Za-z0-9]{8,}")


async def test_the_example_creates_uses_rotates_and_revokes_a_workspace_key(
    user: MemoryClient, stack: Stack
) -> None:
    admin = await user.auth.create_api_key("e2e example admin")
    assert admin.key is not None
    env = child_environment(
        MEMORY_ENDPOINT=stack.endpoint,
        MEMORY_API_KEY=admin.key.get_secret_value(),
        MEMORY_WORKSPACE_ID=stack.workspace_id,
    )

    with anyio.fail_after(60):
        run = await anyio.run_process([sys.executable, str(EXAMPLE)], env=env, check=False)
    stdout, stderr = run.stdout.decode(), run.stderr.decode()

    lines = stdout.splitlines()
    assert run.returncode == 0, stderr[-2000:]
    steps = [line.split(".")[0] for line in lines if line[:1].isdigit()]
    assert steps == ["1", "2", "3", "4", "5", "6"]
    assert "created workspace key key_" in stdout
    assert "used it: api_key key_" in stdout
    assert "old key now: refused: 401 revoked_credentials" in stdout
    assert "new key now: api_key key_" in stdout
    assert lines[-2] == "   new key now: refused: 401 revoked_credentials"
    assert "revoked" in lines[-1]
    assert not PLAINTEXT.search(stdout + stderr)
