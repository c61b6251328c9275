"""Sessions over real HTTP against the local stack: signing out ends the access token on the
very next request, at the routes and through the data-plane gate (the authorizer's own
decision, as API Gateway would run it); the sign-ins are listed and ended."""

from __future__ import annotations

import httpx

from tests.e2e.conftest import Stack
from tests.e2e.test_login import id_token, sign_in

WHOAMI = "/v1/auth/whoami"
SESSIONS = "/v1/auth/sessions"


def gate(stack: Stack, credential: str, workspace: str) -> httpx.Response:
    """The data plane behind the authorizer (the local MCP server's `/v1/...` stand-in)."""
    base = stack.info["mcpResource"].removesuffix("/mcp")
    headers = {"Authorization": f"Bearer {credential}", "X-Workspace-Id": workspace}
    return httpx.get(base + "/v1/memory/items", headers=headers, timeout=10)


def test_signing_out_ends_the_access_token_on_the_next_request_over_http(stack: Stack) -> None:
    pair = sign_in(stack, "e2e-sign-out")
    token = pair["access_token"]
    workspace = stack.call("POST", "/v1/workspaces", token, body={"name": "Signed out"})
    assert workspace.status_code == 201, workspace.text
    workspace_id = workspace.json()["id"]
    assert stack.call("GET", WHOAMI, token).status_code == 200
    assert gate(stack, token, workspace_id).status_code == 200

    signed_out = stack.call("POST", "/v1/auth/revoke", body={"token": pair["refresh_token"]})

    assert signed_out.status_code == 200
    whoami = stack.call("GET", WHOAMI, token)
    assert (whoami.status_code, whoami.json()["code"]) == (401, "revoked_credentials")
    key = stack.call("POST", "/v1/auth/api-keys", token, body={"category": "admin"})
    assert (key.status_code, key.json()["code"]) == (401, "revoked_credentials")
    assert gate(stack, token, workspace_id).status_code == 401


def test_sign_ins_are_listed_and_signing_out_everywhere_ends_them_all_over_http(
    stack: Stack,
) -> None:
    laptop = sign_in(stack, "e2e-everywhere")
    phone = stack.call(
        "POST",
        "/v1/auth/exchange",
        body={"id_token": id_token(stack, "e2e-everywhere")},
        headers={"User-Agent": "memory-phone/1.0"},
    ).json()

    listed = stack.call("GET", SESSIONS, laptop["access_token"])

    assert listed.status_code == 200, listed.text
    sessions = listed.json()["sessions"]
    assert [s["current"] for s in sessions] == [False, True]  # the phone's is newer
    assert sessions[0]["userAgent"] == "memory-phone/1.0"
    assert sessions[0]["ipAddress"] == "127.0.0.1"
    ended = stack.call("DELETE", SESSIONS, phone["access_token"])
    assert ended.status_code == 204
    for pair in (laptop, phone):
        answer = stack.call("GET", WHOAMI, pair["access_token"])
        assert (answer.status_code, answer.json()["code"]) == (401, "revoked_credentials")

