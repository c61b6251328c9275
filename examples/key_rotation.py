"""Rotate a workspace key with a grace period, as a deployment would (Python SDK).

    . .local/connection.env && PYTHONPATH=sdks/python/src .venv/bin/python examples/key_rotation.py

A key in use by running servers cannot be swapped in one instant: rotate it with a grace
period, so that the old key keeps working while the new one is rolled out, then revoke the
old one as soon as nothing uses it (or let the grace period end). Reads MEMORY_ENDPOINT,
MEMORY_WORKSPACE_ID and a credential allowed to manage keys: MEMORY_API_KEY (an admin key)
or MEMORY_LOCAL_TOKEN (the local development user's token). Prints ids and hints, never a key.
"""

import asyncio
import os

from memory_sdk import AuthenticationError, MemoryClient

GRACE_SECONDS = 3600  # how long the old key keeps working: the time a rollout takes


async def who(key) -> str:
    async with MemoryClient(api_key=key) as client:
        try:
            return f"accepted as {(await client.auth.whoami()).key_id}"
        except AuthenticationError as refused:
            return f"refused ({refused.code})"


async def main() -> None:
    token = os.environ.get("MEMORY_LOCAL_TOKEN") if "MEMORY_API_KEY" not in os.environ else None
    async with MemoryClient(access_token=token) as admin:
        old = await admin.auth.create_api_key("deploy key", ["memory"], category="workspace")
        print(f"created {old.id} ({old.hint}) in {old.workspace_id}: {await who(old.key)}")

        new = await admin.auth.rotate_api_key(old.id, grace_period_seconds=GRACE_SECONDS)
        print(f"rotated to {new.id} ({new.hint}); for {GRACE_SECONDS} s both work:")
        print(f"  old key: {await who(old.key)}\n  new key: {await who(new.key)}")

        # ... roll the new key out to every server, then end the grace period early:
        await admin.auth.revoke_api_key(old.id)
        print(f"revoked {old.id}: old key {await who(old.key)}, new key {await who(new.key)}")


asyncio.run(main())
