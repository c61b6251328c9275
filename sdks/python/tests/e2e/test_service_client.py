"""ServiceClientCredentials against the local stack: the owner registers the machine's public
key, the machine gets a workspace token with its private key alone, and deleting the client
ends that token on its next request."""

from __future__ import annotations

import httpx
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from memory_sdk import ServiceClientCredentials, ServiceClientError
from tests.e2e.conftest import Stack

pytestmark = pytest.mark.anyio


async def test_a_machine_gets_a_workspace_token_until_its_client_is_deleted(
    stack: Stack,
) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    owner = {"Authorization": f"Bearer {stack.token}"}
    collection = f"{stack.endpoint}/v1/workspaces/{stack.workspace_id}/service-clients"
    async with httpx.AsyncClient(timeout=30) as http:
        # The public half only: what the machine's owner pastes into the dashboard.
        probe = ServiceClientCredentials(
            endpoint=stack.endpoint, client_id="scl_01JQ0000000000000000000000", private_key=pem
        )
        created = await http.post(
            collection,
            headers=owner,
            json={
                "name": "e2e machine",
                "scopes": ["memory"],
                "jwks": {"keys": [probe.public_jwk]},
            },
        )
        assert created.status_code == 201, created.text
        client_id = created.json()["clientId"]
        credentials = ServiceClientCredentials(
            endpoint=stack.endpoint, client_id=client_id, private_key=pem
        )

        token = await credentials.token()
        whoami = await http.get(
            f"{stack.endpoint}/v1/auth/whoami", headers={"Authorization": f"Bearer {token}"}
        )
        deleted = await http.delete(f"{collection}/{client_id}", headers=owner)
        after = await http.get(
            f"{stack.endpoint}/v1/auth/whoami", headers={"Authorization": f"Bearer {token}"}
        )
        fresh = ServiceClientCredentials(
            endpoint=stack.endpoint, client_id=client_id, private_key=pem
        )
        with pytest.raises(ServiceClientError) as refused:
            await fresh.token()

    assert whoami.status_code == 200, whoami.text
    assert whoami.json()["credential"] == "service_client"
    assert whoami.json()["workspaceId"] == stack.workspace_id
    assert whoami.json()["scopes"] == ["memory"]
    assert deleted.status_code == 204
    assert after.status_code == 401
    assert "invalid_client" in str(refused.value)
