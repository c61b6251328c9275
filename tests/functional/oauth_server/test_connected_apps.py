"""Connected apps: GET /v1/oauth/grants lists the MCP clients a person has let in, DELETE
disconnects one (its refresh token and access tokens refused from the next request)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.access.principal import Principal, Refusal
from tests.functional.oauth_server.conftest import Browser, Mcp, code_grant, pkce

GRANTS = "/v1/oauth/grants"


def connect(mcp: Mcp, subject: str = "alice", workspace: str | None = None) -> dict[str, Any]:
    """A registered client, authorized by `subject`: its token answer and client id."""
    client = mcp.register(client_name="Notes agent")
    verifier, challenge = pkce()
    code = Browser(mcp).code_for(client["client_id"], challenge, subject, workspace)
    answer = mcp.token(code_grant(client["client_id"], code, verifier))
    assert answer.status == 200, answer.body
    return {**answer.json, "client_id": client["client_id"]}


def at_resource(mcp: Mcp, access_token: str) -> Principal | Refusal:
    resource = mcp.services.settings.mcp_resources[0]
    return mcp.services.resolver.resolve(f"Bearer {access_token}", None, resource)


def test_grants_lists_the_callers_connected_clients_newest_first(mcp: Mcp) -> None:
    token, workspace = mcp.person("alice")
    first = connect(mcp, workspace=workspace)
    mcp.services.clock.advance(seconds=1)  # type: ignore[attr-defined]
    second = connect(mcp, workspace=workspace)

    answer = mcp.api.call("GET", GRANTS, token)

    assert answer.status == 200, answer.body
    grants = answer.json["grants"]
    assert [g["clientId"] for g in grants] == [second["client_id"], first["client_id"]]
    assert set(grants[0]) == {
        "id", "clientId", "clientName", "workspaceId", "scopes", "createdAt", "lastUsedAt",
    }
    assert grants[0]["clientName"] == "Notes agent"
    assert grants[0]["workspaceId"] == workspace
    assert grants[0]["scopes"] == ["memory", "entities", "reasoning", "ontology", "skills"]
    assert grants[0]["lastUsedAt"] is None


def test_grants_shows_only_the_callers_own(mcp: Mcp) -> None:
    alice, _ = mcp.person("alice")
    mcp.person("bob")
    connect(mcp, "bob")

    answer = mcp.api.call("GET", GRANTS, alice)

    assert answer.json == {"grants": []}


def test_grants_need_a_user_token(mcp: Mcp) -> None:
    token, _ = mcp.person("alice")
    key = mcp.api.create_key(token)["key"]

    answer = mcp.api.call("GET", GRANTS, key)

    assert answer.status == 403
    assert answer.code == "insufficient_scope"


def test_disconnecting_refuses_the_refresh_and_access_tokens_on_the_next_request(
    mcp: Mcp,
) -> None:
    token, workspace = mcp.person("alice")
    connected = connect(mcp, workspace=workspace)
    assert isinstance(at_resource(mcp, connected["access_token"]), Principal)
    (grant,) = mcp.api.call("GET", GRANTS, token).json["grants"]

    answer = mcp.api.call("DELETE", f"{GRANTS}/{grant['id']}", token)

    assert answer.status == 204
    refused = at_resource(mcp, connected["access_token"])
    assert isinstance(refused, Refusal) and refused.code == "revoked_credentials"
    refreshed = mcp.token(
        {
            "grant_type": "refresh_token",
            "refresh_token": connected["refresh_token"],
            "client_id": connected["client_id"],
        }
    )
    assert refreshed.status == 400
    assert mcp.api.call("GET", GRANTS, token).json == {"grants": []}


@pytest.mark.parametrize("whose", ["someone else's", "unknown", "already disconnected"])
def test_disconnecting_a_grant_that_is_not_the_callers_is_404(mcp: Mcp, whose: str) -> None:
    alice, _ = mcp.person("alice")
    bob, _ = mcp.person("bob")
    connect(mcp, "bob")
    (bobs,) = mcp.api.call("GET", GRANTS, bob).json["grants"]
    grant_id = {"unknown": "01JD7Q2X9V3K5M8N1P4R6T0W2Y"}.get(whose, bobs["id"])
    caller = alice
    if whose == "already disconnected":
        assert mcp.api.call("DELETE", f"{GRANTS}/{grant_id}", bob).status == 204
        caller = bob

    answer = mcp.api.call("DELETE", f"{GRANTS}/{grant_id}", caller)

    assert answer.status == 404
    assert answer.code == "not_found"


def test_connecting_and_disconnecting_record_grant_events(mcp: Mcp) -> None:
    token, workspace = mcp.person("alice")
    connected = connect(mcp, workspace=workspace)
    (grant,) = mcp.api.call("GET", GRANTS, token).json["grants"]
    mcp.api.call("DELETE", f"{GRANTS}/{grant['id']}", token)

    events = mcp.api.call("GET", "/v1/auth/events", token).json["events"]

    by_type = {e["type"]: e for e in events if e["type"].startswith("grant.")}
    assert set(by_type) == {"grant.created", "grant.revoked"}
    for event in by_type.values():
        assert event["workspaceId"] == workspace
        assert event["data"]["grantId"] == grant["id"]
        assert event["data"]["clientId"] == connected["client_id"]
        assert connected["access_token"] not in str(event)
