"""An agent holding a key hands a sub-agent a narrower token, which the sub-agent may narrow
again for its own helper; each hand-over is recorded in the token's `act` claim.

Configuration comes from the environment:

    MEMORY_ENDPOINT      the service, e.g. http://127.0.0.1:8000 for `make run`
    MEMORY_API_KEY       the agent's workspace key (svc_…)

    .venv/bin/python examples/delegation/sub_agent_token.py

Nothing secret is printed.
"""

from __future__ import annotations

import asyncio
import sys

from memory_sdk import BadRequestError, MemoryClient, MemorySDKError, OAuthError


async def main() -> int:
    async with MemoryClient() as agent:
        handed = await agent.auth.delegate(
            scopes=["memory", "reasoning"], expires_in=600, actor="sub-agent"
        )
        print(f"1. the agent handed on: {' '.join(handed.scopes)}, {handed.expires_in} s")

    async with MemoryClient.from_delegated_token(handed.access_token) as sub_agent:
        helper = await sub_agent.auth.delegate(scopes=["memory"], actor="helper")
        print(f"2. the sub-agent handed on: {' '.join(helper.scopes)}, {helper.expires_in} s")
        try:
            await sub_agent.auth.delegate(scopes=["memory", "skills"], actor="helper")
        except (OAuthError, BadRequestError) as refused:
            print(f"3. it may not widen its scopes: {refused.status} {refused.code}")
        else:
            print("3. it widened its scopes: this should never happen")
            return 1

    async with MemoryClient.from_delegated_token(helper.access_token) as helper_client:
        me = await helper_client.auth.whoami()
        print(f"4. the helper is: {me.credential}, scopes {' '.join(me.scopes)}, act {me.act}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except MemorySDKError as error:
        print(f"failed: {error}", file=sys.stderr)
        sys.exit(1)
