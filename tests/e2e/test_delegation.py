"""Delegated tokens over real HTTP: minted at the local stack's exchange, used through its
data-plane gate (the authorizer's own decision, as API Gateway would run it), and refused on
the very next request once their root key is revoked."""

from __future__ import annotations

from typing import Any

import httpx

from tests.e2e.conftest import Stack

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


def delegate(stack: Stack, subject: str, **fields: str) -> httpx.Response:
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": subject,
        "subject_token_type": ACCESS_TOKEN_TYPE,
        **fields,
    }
    return stack.http.post("/v1/auth/exchange", data=form)


def gate(stack: Stack, path: str, credential: str, workspace: str | None = None) -> httpx.Response:
    """The data plane behind the authorizer (the local MCP server's `/v1/...` stand-in)."""
    base = stack.info["mcpResource"].removesuffix("/mcp")
    headers = {"Authorization": f"Bearer {credential}"}
    if workspace:
        headers["X-Workspace-Id"] = workspace
    return httpx.get(base + path, headers=headers, timeout=10)


def workspace_key(stack: Stack) -> dict[str, Any]:
    body = {"label": "browser minting", "category": "workspace", "workspaceId": stack.workspace_id}
    answer = stack.call("POST", "/v1/auth/api-keys", stack.token, body=body)
    assert answer.status_code == 201, answer.text
    return dict(answer.json())


def test_a_browser_token_works_through_the_authorizer_for_its_scopes_only(stack: Stack) -> None:
    key = workspace_key(stack)

    minted = delegate(stack, key["key"], scope="memory", expires_in="300", actor="browser")

    assert minted.status_code == 200, minted.text
    assert minted.headers["cache-control"] == "no-store"
    token = minted.json()["access_token"]
    allowed = gate(stack, "/v1/memory/items", token)
    assert allowed.status_code == 200, allowed.text
    assert allowed.json()["credential"] == "delegated"
    assert allowed.json()["workspaceId"] == stack.workspace_id
    assert gate(stack, "/v1/skills/list", token).status_code == 403
    whoami = stack.call("GET", "/v1/auth/whoami", token)
    assert whoami.json()["act"] == {"sub": "browser"}
    assert stack.call("GET", "/v1/auth/api-keys", token).status_code == 403


def test_revoking_the_root_key_refuses_the_whole_chain_on_the_next_request(
    stack: Stack,
) -> None:
    key = workspace_key(stack)
    agent = delegate(stack, key["key"], scope="memory entities", actor="agent")
    assert agent.status_code == 200, agent.text
    sub_agent = delegate(stack, agent.json()["access_token"], scope="memory", actor="sub-agent")
    assert sub_agent.status_code == 200, sub_agent.text
    tokens = [agent.json()["access_token"], sub_agent.json()["access_token"]]
    assert [gate(stack, "/v1/memory/items", t).status_code for t in tokens] == [200, 200]

    revoked = stack.call("DELETE", f"/v1/auth/api-keys/{key['id']}", stack.token)

    assert revoked.status_code == 204
    assert [gate(stack, "/v1/memory/items", t).status_code for t in tokens] == [401, 401]
    assert stack.call("GET", "/v1/auth/whoami", tokens[1]).json()["code"] == (
        "revoked_credentials"
    )


def test_sign_out_revokes_the_login_refresh_token(stack: Stack) -> None:
    answer = stack.http.post("/v1/auth/revoke", json={"token": "rt_" + "unknown"})

    assert answer.status_code == 200
