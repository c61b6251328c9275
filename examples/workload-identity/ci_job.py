"""A CI job that calls the memory service with workload identity: no stored secret.

Its platform's OIDC token (a file, or GitHub Actions' token endpoint) is exchanged for a
short-lived token of one workspace under a trust policy the workspace's owner created
(docs/guides/workload-identity.md). Configuration, all from the environment:

    MEMORY_ENDPOINT         the service, e.g. https://api.memory.example
    MEMORY_WORKSPACE_ID     the workspace the job acts in
    MEMORY_OIDC_TOKEN_FILE  a file holding the platform's token (GitLab, Kubernetes), or
    ACTIONS_ID_TOKEN_REQUEST_URL / _TOKEN  (set by GitHub Actions with id-token: write)
    MEMORY_OIDC_AUDIENCE    the audience the trust policy names (GitHub Actions only)

    python examples/workload-identity/ci_job.py
"""

from __future__ import annotations

import asyncio
import json
import os

import httpx
from memory_sdk import WorkloadIdentity


async def main() -> None:
    identity = WorkloadIdentity.from_env()
    token = await identity.token()
    endpoint = os.environ.get("MEMORY_ENDPOINT", "https://api.memory.example").rstrip("/")
    async with httpx.AsyncClient(timeout=30) as http:
        # whoami: who the service sees (a workload, its workspace and scopes). A data-plane
        # call (`/v1/memory/...`) is made the same way, with the same bearer token.
        answer = await http.get(
            endpoint + "/v1/auth/whoami", headers={"Authorization": f"Bearer {token}"}
        )
    answer.raise_for_status()
    me = answer.json()
    print(json.dumps({k: me.get(k) for k in ("credential", "workspaceId", "scopes")}))


if __name__ == "__main__":
    asyncio.run(main())
