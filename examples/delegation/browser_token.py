"""A server that holds a workspace key mints a short-lived, read-only token for its browser
front-end, then shows what the token may and may not do.

Configuration comes from the environment:

    MEMORY_ENDPOINT      the service, e.g. http://127.0.0.1:8000 for `make run`
    MEMORY_API_KEY       the server's workspace key (svc_…), bound to one workspace

    .venv/bin/python examples/delegation/browser_token.py

A browser would receive only the token (over the page's own session, never in a URL); it
expires in 5 minutes, carries the read scopes only, and stops working on the next request
once the server's key is revoked. Nothing secret is printed.
"""

from __future__ import annotations

import asyncio
import sys

from memory_sdk import MemoryClient, MemorySDKError, PermissionDeniedError

READ_SCOPES = ["memory", "entities"]


async def main() -> int:
    async with MemoryClient() as server:
        token = await server.auth.delegate(scopes=READ_SCOPES, expires_in=300, actor="browser")
        print(f"1. minted a browser token: scopes {' '.join(token.scopes)}, {token.expires_in} s")

    async with MemoryClient.from_delegated_token(token.access_token) as browser:
        me = await browser.auth.whoami()
        print(f"2. the browser is: {me.credential} in {me.workspace_id}, acting as {me.act}")
        try:
            await browser.auth.list_api_keys()
        except PermissionDeniedError as refused:
            print(f"3. it may not manage keys: {refused.status} {refused.code}")
        else:
            print("3. it managed keys: this should never happen")
            return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except MemorySDKError as error:
        print(f"failed: {error}", file=sys.stderr)
        sys.exit(1)
