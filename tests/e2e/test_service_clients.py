"""Service clients over real HTTP, driven by independent clients: the Python `mcp` SDK's own
`PrivateKeyJWTOAuthProvider` and the TypeScript MCP SDK's `PrivateKeyJwtProvider`
(client_credentials with private_key_jwt). The owner registers
the machine's public key; the SDK discovers this service from the MCP server's 401, signs its
assertion for our issuer, gets a token for the MCP resource, and calls tools. Deleting the
client refuses that very token at the resource on its next request."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm
from mcp import Client
from mcp.client.auth.extensions.client_credentials import (
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from tests.e2e.conftest import Stack
from tests.e2e.node import installed

MCP_SDK = Path(__file__).resolve().parent / "mcp_sdk"

SCOPES_SUPPORTED = ["memory", "entities", "reasoning", "ontology", "skills"]


class Storage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def test_the_mcp_sdks_private_key_jwt_provider_calls_tools_until_its_client_is_deleted(
    stack: Stack,
) -> None:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)  # no kid: the SDK sends none
    collection = f"/v1/workspaces/{stack.workspace_id}/service-clients"
    created = stack.call(
        "POST",
        collection,
        stack.token,
        # Every scope the resource advertises: the SDK asks for its scopes_supported (SEP-835),
        # whatever its `scope`, and a scope the client lacks is rightly invalid_scope.
        body={"name": "mcp sdk machine", "scopes": SCOPES_SUPPORTED, "jwks": {"keys": [public]}},
    )
    assert created.status_code == 201, created.text
    client_id = created.json()["clientId"]
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    storage = Storage()
    provider = PrivateKeyJWTOAuthProvider(
        server_url=stack.info["mcpResource"],
        storage=storage,
        client_id=client_id,
        assertion_provider=SignedJWTParameters(
            issuer=client_id, subject=client_id, signing_key=pem, lifetime_seconds=120
        ).create_assertion_provider(),
        issuer=stack.endpoint,
    )

    async def whoami() -> Any:
        async with (
            httpx2.AsyncClient(auth=provider, timeout=30) as http,
            Client(streamable_http_client(stack.info["mcpResource"], http_client=http)) as client,
        ):
            return await client.call_tool("whoami", {})

    result = anyio.run(whoami)
    assert storage.tokens is not None
    token = storage.tokens.access_token
    deleted = stack.call("DELETE", f"{collection}/{client_id}", stack.token)
    base = stack.info["mcpResource"]
    after = httpx2.post(
        base,
        headers={
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=10,
    )

    assert not result.is_error, result
    assert storage.tokens.refresh_token is None  # client_credentials: no refresh token
    assert deleted.status_code == 204
    assert after.status_code == 401


@pytest.mark.parametrize("audience_suffix", ["", "/v1/oauth/token"])
def test_a_service_client_token_works_at_the_routes_by_either_audience(
    stack: Stack, audience_suffix: str
) -> None:
    import time

    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwt.algorithms import ECAlgorithm

    key = ec.generate_private_key(ec.SECP256R1())
    public = {**ECAlgorithm.to_jwk(key.public_key(), as_dict=True), "kid": "k1"}
    created = stack.call(
        "POST",
        f"/v1/workspaces/{stack.workspace_id}/service-clients",
        stack.token,
        body={"name": "route machine", "scopes": ["memory"], "jwks": {"keys": [public]}},
    ).json()
    now = int(time.time())
    claims = {"iss": created["clientId"], "sub": created["clientId"], "iat": now,
              "aud": stack.endpoint + audience_suffix, "exp": now + 60, "jti": f"j{now}"}
    assertion = jwt.encode(claims, key, algorithm="ES256", headers={"kid": "k1"})

    answer = stack.http.post(
        "/v1/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
        },
    )
    replayed = stack.http.post(
        "/v1/oauth/token",
        data={
            "grant_type": "client_credentials",
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
        },
    )
    whoami = stack.call("GET", "/v1/auth/whoami", answer.json().get("access_token"))

    assert answer.status_code == 200, answer.text
    assert (replayed.status_code, replayed.json()["error"]) == (401, "invalid_client")
    assert whoami.json()["credential"] == "service_client"


def test_the_typescript_mcp_sdks_private_key_jwt_provider_calls_tools(stack: Stack) -> None:
    from cryptography.hazmat.primitives.asymmetric import ec
    from jwt.algorithms import ECAlgorithm

    folder = installed(MCP_SDK)
    key = ec.generate_private_key(ec.SECP256R1())
    public = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)  # no kid: the SDK sends none
    collection = f"/v1/workspaces/{stack.workspace_id}/service-clients"
    created = stack.call(
        "POST",
        collection,
        stack.token,
        body={"name": "ts mcp sdk machine", "scopes": SCOPES_SUPPORTED, "jwks": {"keys": [public]}},
    )
    assert created.status_code == 201, created.text
    client_id = created.json()["clientId"]
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ).decode()
    env = {
        **os.environ,
        "MCP_RESOURCE": stack.info["mcpResource"],
        "ISSUER": stack.endpoint,
        "CLIENT_ID": client_id,
        "PRIVATE_KEY_PEM": pem,
        "SCOPE": " ".join(SCOPES_SUPPORTED),
    }

    ran = subprocess.run(
        ["node", "client_credentials.mjs"], cwd=folder, env=env, capture_output=True,
        text=True, timeout=60, check=False,
    )
    answer = json.loads(ran.stdout.strip().splitlines()[-1])
    stack.call("DELETE", f"{collection}/{client_id}", stack.token)
    after = httpx2.post(
        stack.info["mcpResource"],
        headers={
            "Authorization": f"Bearer {answer.get('accessToken')}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        },
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        timeout=10,
    )

    assert ran.returncode == 0, answer
    assert not answer["result"].get("isError"), answer["result"]
    assert answer["refreshToken"] is None
    assert after.status_code == 401  # its client is gone: refused at the resource
