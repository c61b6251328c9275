"""Enterprise-managed authorization (ID-JAG): an MCP client gets its token without a browser.

    . .local/connection.env && .venv/bin/python examples/mcp_id_jag.py

The enterprise IdP (locally the development issuer, MEMORY_LOCAL_IDP, which the local stack
trusts in ENTERPRISE_IDPS) vouches for a person it signed in: the client trades that
person's ID token at the IdP for an ID-JAG naming this authorization server, the MCP
resource, the client and the scopes the IdP allows (RFC 8693), then trades the ID-JAG here
for an MCP access token (RFC 7523 jwt-bearer). No consent page, no refresh token: when the
token runs out the client asks the IdP again. The person is `developer`, a member of the
development workspace only, so no workspace_id is needed.
"""

import asyncio
import os

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"


async def main() -> None:
    issuer, idp = os.environ["MEMORY_ENDPOINT"], os.environ["MEMORY_LOCAL_IDP"]
    resource = os.environ["MEMORY_LOCAL_MCP_RESOURCE"]
    async with httpx2.AsyncClient(timeout=30) as http:
        # The client, registered here once (a public client: no secret).
        client_id = (await http.post(f"{issuer}/v1/oauth/register", json={
            "client_name": "enterprise agent", "redirect_uris": ["http://127.0.0.1:47214/cb"],
        })).json()["client_id"]
        # The person signs in at their enterprise IdP (the development one asks nothing).
        id_token = (await http.post(f"{idp}/token", json={"sub": "developer"})).json()["id_token"]
        # Leg 1, at the IdP: the person's ID token for an ID-JAG for this server and resource.
        id_jag = (await http.post(f"{idp}/id-jag", data={
            "grant_type": TOKEN_EXCHANGE,
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "subject_token": id_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "audience": issuer, "resource": resource, "client_id": client_id,
            "scope": "memory entities",
        })).json()["access_token"]
        # Leg 2, here: the ID-JAG for an MCP access token.
        answer = (await http.post(f"{issuer}/v1/oauth/token", data={
            "grant_type": JWT_BEARER, "assertion": id_jag, "scope": "memory",
        })).json()
        print(f"granted {answer['scope']} for {answer['expires_in']} s")
    headers = {"Authorization": f"Bearer {answer['access_token']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(resource, http_client=http)) as client,
    ):
        print((await client.call_tool("whoami", {})).content[0].text)


asyncio.run(main())
