"""Create a workspace key, use it, rotate it and revoke it, printing each step.

Configuration comes from the environment:

    MEMORY_ENDPOINT      the service, e.g. http://127.0.0.1:8000 for `make run`
    MEMORY_API_KEY       an admin key (svc_…) that may manage keys
    MEMORY_WORKSPACE_ID  the workspace the new key is bound to

    python examples/workspace_key_lifecycle.py

Only ids and hints are printed, never a plaintext key.
"""

from __future__ import annotations

import asyncio
import sys

from pydantic import SecretStr

from memory_sdk import AuthenticationError, MemoryClient, MemorySDKError


async def whoami_as(key: SecretStr) -> str:
    """Who the service says `key` is, or why it refuses it."""
    async with MemoryClient(api_key=key) as client:
        try:
            me = await client.auth.whoami()
        except AuthenticationError as refused:
            return f"refused: {refused.status} {refused.code}"
    return f"{me.credential} {me.key_id} ({me.category}, workspace {me.workspace_id})"


async def main() -> int:
    async with MemoryClient() as admin:
        if admin.workspace_id is None:
            print("set MEMORY_WORKSPACE_ID to the workspace the key is for", file=sys.stderr)
            return 2
        me = await admin.auth.whoami()
        print(f"1. signed in as {me.user_id} with {me.credential} {me.key_id}")

        created = await admin.auth.create_api_key(
            "example workspace key", ["memory", "entities"], category="workspace"
        )
        assert created.key is not None  # create always returns the plaintext, once
        print(
            f"2. created {created.category} key {created.id} ({created.hint}) bound to "
            f"{created.workspace_id}, scopes {', '.join(created.scopes)}"
        )

        print(f"3. used it: {await whoami_as(created.key)}")

        rotated = await admin.auth.rotate_api_key(created.id)
        assert rotated.key is not None
        print(f"4. rotated {created.id} -> {rotated.id} ({rotated.hint})")
        print(f"   old key now: {await whoami_as(created.key)}")
        print(f"   new key now: {await whoami_as(rotated.key)}")

        await admin.auth.revoke_api_key(rotated.id)
        print(f"5. revoked {rotated.id}")
        print(f"   new key now: {await whoami_as(rotated.key)}")

        statuses = {
            key.id: key.status
            for key in await admin.auth.list_api_keys()
            if key.id in (created.id, rotated.id)
        }
        print(f"6. listed: {', '.join(f'{i} {s}' for i, s in statuses.items())}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except MemorySDKError as error:
        print(f"failed: {error}", file=sys.stderr)
        sys.exit(1)
