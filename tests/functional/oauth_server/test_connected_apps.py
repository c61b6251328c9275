"""Connected apps: GET /v1/oauth/grants lists the MCP clients a person has let in, DELETE
disconnects one (its refresh token and access tokens refused from the next request)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.access.principal import Principal, Refusal
from chalicelib.oauth.consents import consent_id
from tests.functional.oauth_server.conftest import Browser, Mcp, code_grant, pkce, query_of
from tests.functional.oauth_server.test_consent_remembered import (
    WEB_CALLBACK,
    signed_in_again,
    web_client,
    went_straight_back,
)

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
        "kind",
    }
    assert grants[0]["kind"] == "grant"
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
    assert_ended(mcp, connected, token)


def assert_ended(mcp: Mcp, connected: dict[str, Any], token: str) -> None:
    """The connection's access token is refused at its resource, its refresh token at the
    token endpoint, and nothing is listed any more."""
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


# -- a remembered consent, before any token ------------------------------------------------


def consented(mcp: Mcp, client_id: str, subject: str, workspace: str) -> str:
    """`subject` allows `client_id` on the consent page (remembered); the client never
    redeems its code, so no token is issued. The code's verifier is dropped."""
    _, challenge = pkce()
    browser = Browser(mcp)
    at_provider = browser.authorize(client_id, challenge, redirect_uri=WEB_CALLBACK)
    _, form = browser.consent_form(browser.sign_in(at_provider, subject))
    back = browser.decide(form, workspace=workspace)
    assert back.status == 303, back.body
    return str(query_of(back.headers["Location"])["code"])


def test_a_remembered_consent_is_listed_before_any_token_was_issued(mcp: Mcp) -> None:
    token, workspace = mcp.person("alice")
    client_id = web_client(mcp)
    consented(mcp, client_id, "alice", workspace)

    answer = mcp.api.call("GET", GRANTS, token)

    assert answer.status == 200, answer.body
    (listed,) = answer.json["grants"]
    assert listed["kind"] == "consent"
    assert listed["id"] == consent_id(client_id)
    assert listed["clientId"] == client_id
    assert listed["clientName"] == "Test Agent"
    assert listed["workspaceId"] == workspace
    assert listed["scopes"] == ["memory", "entities", "reasoning", "ontology", "skills"]
    assert listed["lastUsedAt"] is None


def test_a_remembered_consent_is_listed_with_one_query(mcp: Mcp) -> None:
    token, workspace = mcp.person("alice")
    consented(mcp, web_client(mcp), "alice", workspace)
    connect(mcp, workspace=workspace)
    queries: list[dict[str, Any]] = []
    mcp.services.dynamodb.meta.events.register(
        "provide-client-params.dynamodb.Query", lambda params, **_: queries.append(params)
    )

    grants = mcp.api.call("GET", GRANTS, token).json["grants"]

    assert sorted(g["kind"] for g in grants) == ["consent", "grant"]
    assert len(queries) == 1


def test_a_grant_in_force_stands_for_its_clients_consent(mcp: Mcp) -> None:
    token, workspace = mcp.person("alice")
    connected = connect(mcp, workspace=workspace)  # its consent is remembered too

    grants = mcp.api.call("GET", GRANTS, token).json["grants"]

    assert [(g["clientId"], g["kind"]) for g in grants] == [(connected["client_id"], "grant")]


def test_revoking_a_remembered_consent_is_204_and_the_next_authorization_asks_again(
    mcp: Mcp,
) -> None:
    token, workspace = mcp.person("alice")
    client_id = web_client(mcp)
    consented(mcp, client_id, "alice", workspace)
    remembered, _ = signed_in_again(mcp, client_id, "alice")
    assert went_straight_back(remembered)  # remembered until revoked

    answer = mcp.api.call("DELETE", f"{GRANTS}/{consent_id(client_id)}", token)

    assert answer.status == 204
    asked, _ = signed_in_again(mcp, client_id, "alice")
    assert not went_straight_back(asked)
    assert "/v1/oauth/consent?" in asked.headers["Location"]
    assert mcp.api.call("GET", GRANTS, token).json == {"grants": []}
    events = mcp.api.call("GET", "/v1/auth/events", token).json["events"]
    (revoked,) = [e for e in events if e["type"] == "grant.revoked"]
    assert revoked["data"]["grantId"] == consent_id(client_id)
    assert revoked["data"]["clientId"] == client_id


def test_revoking_a_remembered_consent_ends_the_tokens_issued_under_it(mcp: Mcp) -> None:
    token, workspace = mcp.person("alice")
    connected = connect(mcp, workspace=workspace)
    assert isinstance(at_resource(mcp, connected["access_token"]), Principal)

    answer = mcp.api.call("DELETE", f"{GRANTS}/{consent_id(connected['client_id'])}", token)

    assert answer.status == 204
    assert_ended(mcp, connected, token)


@pytest.mark.parametrize("whose", ["someone else's", "never given", "already revoked"])
def test_revoking_a_consent_that_is_not_the_callers_is_404(mcp: Mcp, whose: str) -> None:
    alice, _ = mcp.person("alice")
    bob, bobs_workspace = mcp.person("bob")
    client_id = web_client(mcp)
    consented(mcp, client_id, "bob", bobs_workspace)
    caller = alice
    if whose == "already revoked":
        assert mcp.api.call("DELETE", f"{GRANTS}/{consent_id(client_id)}", bob).status == 204
        caller = bob
    listed_id = consent_id("https://never.test.example/client.json" if whose == "never given"
                           else client_id)

    answer = mcp.api.call("DELETE", f"{GRANTS}/{listed_id}", caller)

    assert answer.status == 404
    assert answer.code == "not_found"
    if whose == "someone else's":
        assert [g["kind"] for g in mcp.api.call("GET", GRANTS, bob).json["grants"]] == ["consent"]
