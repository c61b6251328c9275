"""Tokens are accepted only where their audience says: MCP tokens at their resource (through
the data-plane authorizer), never at this service's routes or other data-plane paths; user
tokens never at an MCP resource. Plus discovery, registration and revocation."""

from __future__ import annotations

from copy import replace
from typing import Any

import pytest

from chalicelib.decisions.authorizer import Unauthorized
from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import ISSUER
from tests.functional.oauth_server.conftest import (
    CALLBACK,
    FORM,
    OTHER_RESOURCE,
    RESOURCE,
    Browser,
    Invoke,
    Mcp,
    code_grant,
    pkce,
)

METADATA = "https://memory.test.example/.well-known/oauth-protected-resource/mcp"
FIVE = "memory entities reasoning ontology skills"  # the resource's scopes_supported


def tokens_for(mcp: Mcp, subject: str, scope: str | None = None) -> tuple[dict[str, Any], str, str]:
    """(token answer, workspace id, user token) of an authorization by `subject`."""
    user_token, workspace = mcp.person(subject)
    client_id = mcp.serve_document()
    verifier, challenge = pkce()
    browser = Browser(mcp)
    answer = browser.authorize(client_id, challenge, scope=scope)
    _, form = browser.consent_form(browser.sign_in(answer, subject))
    decided = browser.decide(form, workspace=workspace)
    code = decided.headers["Location"].split("code=")[1].split("&")[0]
    issued = mcp.token(code_grant(client_id, code, verifier))
    assert issued.status == 200, issued.body
    return dict(issued.json), workspace, user_token


def effect(answer: dict[str, Any]) -> str:
    return str(answer["policyDocument"]["Statement"][0]["Effect"])


def test_an_mcp_token_is_allowed_at_its_resource_bound_to_its_workspace(
    mcp: Mcp, authorize: Invoke
) -> None:
    tokens, workspace, _ = tokens_for(mcp, "alice")
    answer = authorize(request_event("/mcp", bearer(tokens["access_token"])))
    assert effect(answer) == "Allow"
    context = answer["context"]
    assert context["credential"] == "mcp_token" and context["workspaceId"] == workspace
    assert context["clientId"].startswith("https://") and context["scopes"].startswith("memory")

    with_header = authorize(request_event("/mcp/x", bearer(tokens["access_token"]), workspace))
    assert effect(with_header) == "Allow"


def test_an_mcp_token_naming_another_workspace_is_workspace_mismatch(
    mcp: Mcp, authorize: Invoke
) -> None:
    tokens, _, user_token = tokens_for(mcp, "bob")
    other = mcp.api.workspace(user_token, "Other")
    answer = authorize(request_event("/mcp", bearer(tokens["access_token"]), other))
    assert effect(answer) == "Deny"
    assert answer["context"]["code"] == "workspace_mismatch"
    assert answer["context"]["wwwAuthenticate"] == f'Bearer resource_metadata="{METADATA}"'


def test_membership_is_checked_on_every_request(mcp: Mcp, authorize: Invoke) -> None:
    tokens, workspace, _ = tokens_for(mcp, "carol")
    owner_token, _ = mcp.person("carols-boss")
    # carol is the owner of her workspace; make a shared one she is then removed from.
    shared = mcp.api.workspace(owner_token, "Shared")
    carol_id = mcp.api.call("GET", "/v1/auth/whoami", mcp.person("carol")[0]).json["userId"]
    mcp.api.add_member(owner_token, shared, carol_id)
    shared_tokens = _authorize_in(mcp, "carol", shared)
    shared_event = request_event("/mcp", bearer(shared_tokens["access_token"]))
    assert effect(authorize(shared_event)) == "Allow"
    removed = mcp.api.call("DELETE", f"/v1/workspaces/{shared}/members/{carol_id}", owner_token)
    assert removed.status == 204
    answer = authorize(request_event("/mcp", bearer(shared_tokens["access_token"])))
    assert effect(answer) == "Deny" and answer["context"]["code"] == "not_a_member"


def test_an_mcp_token_decision_is_one_round_trip_reading_grant_and_membership_together(
    mcp: Mcp, authorize: Invoke
) -> None:
    tokens, _, _ = tokens_for(mcp, "erin")
    event = request_event("/mcp", bearer(tokens["access_token"]))
    authorize(event)  # a container's first decision also fetches the signing keys (KMS)
    sent: list[str] = []

    def on_send(request: Any, **_: Any) -> None:
        sent.append(request.headers["X-Amz-Target"].decode().rsplit(".", 1)[-1])

    mcp.services.dynamodb.meta.events.register("before-send.dynamodb", on_send)
    try:
        answer = authorize(event)
    finally:
        mcp.services.dynamodb.meta.events.unregister("before-send.dynamodb", on_send)

    assert effect(answer) == "Allow"
    assert sent == ["BatchGetItem"]


def _authorize_in(mcp: Mcp, subject: str, workspace: str) -> dict[str, Any]:
    client_id = mcp.serve_document()
    verifier, challenge = pkce()
    code = Browser(mcp).code_for(client_id, challenge, subject=subject, workspace=workspace)
    return dict(mcp.token(code_grant(client_id, code, verifier)).json)


def test_a_token_without_the_memory_scope_gets_insufficient_scope_with_the_scope(
    mcp: Mcp, authorize: Invoke
) -> None:
    tokens, _, _ = tokens_for(mcp, "dave", scope="skills")
    answer = authorize(request_event("/mcp", bearer(tokens["access_token"])))
    assert effect(answer) == "Deny"
    assert answer["context"]["code"] == "insufficient_scope"
    assert answer["context"]["wwwAuthenticate"] == (
        f'Bearer error="insufficient_scope", scope="memory", resource_metadata="{METADATA}"'
    )


def test_an_mcp_token_is_refused_elsewhere(mcp: Mcp, authorize: Invoke) -> None:
    tokens, workspace, _ = tokens_for(mcp, "erin")
    token = tokens["access_token"]

    whoami = mcp.api.call("GET", "/v1/auth/whoami", token)
    keys = mcp.api.call("GET", "/v1/auth/api-keys", token)
    with pytest.raises(Unauthorized):
        authorize(request_event("/v1/memory/items", bearer(token), workspace))
    with pytest.raises(Unauthorized):
        authorize(request_event("/tools", bearer(token)))  # the other resource's path

    assert whoami.status == 401 and whoami.code == "invalid_credentials"
    assert keys.status == 401


def test_a_user_token_is_refused_at_the_mcp_resource(mcp: Mcp, authorize: Invoke) -> None:
    user_token, workspace = mcp.person("frank")
    with pytest.raises(Unauthorized):
        authorize(request_event("/mcp", bearer(user_token), workspace))
    # ...where API keys are accepted, as at any data-plane path.
    key = mcp.api.create_key(user_token, category="workspace", workspaceId=workspace)
    assert effect(authorize(request_event("/mcp", bearer(key["key"])))) == "Allow"
    admin = mcp.api.create_key(user_token, label="admin")
    no_workspace = authorize(request_event("/mcp", bearer(admin["key"])))
    assert no_workspace["context"]["code"] == "workspace_required"


def test_a_revoked_grant_refuses_its_access_token_on_the_next_request(
    mcp: Mcp, authorize: Invoke
) -> None:
    tokens, _, _ = tokens_for(mcp, "gina")
    client_id = mcp.documents.fetches[-1]
    assert effect(authorize(request_event("/mcp", bearer(tokens["access_token"])))) == "Allow"

    foreign = mcp.api.call(
        "POST", "/v1/oauth/revoke", headers=FORM,
        raw=f"token={tokens['refresh_token']}&client_id=cli_01OTHER0000000000000000000".encode(),
    )
    still = authorize(request_event("/mcp", bearer(tokens["access_token"])))
    revoked = mcp.api.call(
        "POST", "/v1/oauth/revoke", headers=FORM,
        raw=f"token={tokens['refresh_token']}&client_id={client_id}".encode(),
    )

    assert foreign.status == 200 and effect(still) == "Allow"
    assert revoked.status == 200
    with pytest.raises(Unauthorized):
        authorize(request_event("/mcp", bearer(tokens["access_token"])))
    refresh = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
         "client_id": client_id}
    )
    assert refresh.status == 400


def test_revoking_an_access_token_revokes_its_grant_and_unknown_tokens_are_200(
    mcp: Mcp, authorize: Invoke
) -> None:
    tokens, _, _ = tokens_for(mcp, "hank")
    client_id = mcp.documents.fetches[-1]
    unknown = mcp.api.call(
        "POST", "/v1/oauth/revoke", headers=FORM, raw=b"token=nothing-we-issued&client_id=x"
    )
    revoked = mcp.api.call(
        "POST", "/v1/oauth/revoke", headers=FORM,
        raw=f"token={tokens['access_token']}&client_id={client_id}".encode(),
    )
    assert unknown.status == 200 and revoked.status == 200
    with pytest.raises(Unauthorized):
        authorize(request_event("/mcp", bearer(tokens["access_token"])))


@pytest.mark.parametrize("kind", ["refresh_token", "access_token"])
def test_revoking_with_the_token_alone_ends_its_grant(
    mcp: Mcp, authorize: Invoke, kind: str
) -> None:
    """A public client that sends only the token (RFC 7009 allows it) is the token's holder:
    its logout works."""
    tokens, _, _ = tokens_for(mcp, f"ivy-{kind}")
    client_id = mcp.documents.fetches[-1]

    revoked = mcp.api.call(
        "POST", "/v1/oauth/revoke", headers=FORM, raw=f"token={tokens[kind]}".encode()
    )

    assert revoked.status == 200
    with pytest.raises(Unauthorized):
        authorize(request_event("/mcp", bearer(tokens["access_token"])))
    refresh = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
         "client_id": client_id}
    )
    assert refresh.status == 400 and refresh.json["error"] == "invalid_grant"


def test_a_401_at_the_mcp_resource_says_invalid_token_when_a_token_was_sent_and_hints_the_scope(
    mcp: Mcp,
) -> None:
    """The local stand-in for the memory service's gateway (local/mcp_server.py)."""
    from local.mcp_server import decide

    def at_mcp(*headers: tuple[bytes, bytes]) -> tuple[int, dict[str, str]]:
        status, answer_headers, _ = decide({"method": "POST", "path": "/mcp", "headers": headers})
        return status, answer_headers

    bad = at_mcp((b"authorization", b"Bearer " + b"not-a-token"))
    nothing = at_mcp()

    hint = f'scope="{FIVE}", resource_metadata="{METADATA}"'
    assert bad == (401, {"WWW-Authenticate": f'Bearer error="invalid_token", {hint}'})
    assert nothing == (401, {"WWW-Authenticate": f"Bearer {hint}"})


# -- discovery ------------------------------------------------------------------------------


def test_authorization_server_metadata(mcp: Mcp) -> None:
    answer = mcp.api.call("GET", "/.well-known/oauth-authorization-server")
    assert answer.status == 200
    body = answer.json
    assert body["issuer"] == ISSUER
    assert body["authorization_endpoint"] == ISSUER + "/v1/oauth/authorize"
    assert body["token_endpoint"] == ISSUER + "/v1/oauth/token"
    assert body["registration_endpoint"] == ISSUER + "/v1/oauth/register"
    assert body["revocation_endpoint"] == ISSUER + "/v1/oauth/revoke"
    assert body["jwks_uri"] == ISSUER + "/.well-known/jwks.json"
    assert body["code_challenge_methods_supported"] == ["S256"]
    assert body["token_endpoint_auth_methods_supported"] == ["none"]
    assert body["client_id_metadata_document_supported"] is True
    assert body["authorization_response_iss_parameter_supported"] is True
    assert body["scopes_supported"] == [
        "memory", "entities", "reasoning", "ontology", "skills", "workspace:admin"
    ]


def test_protected_resource_metadata_of_each_resource(mcp: Mcp) -> None:
    ours = mcp.api.call("GET", "/.well-known/oauth-protected-resource/mcp")
    other = mcp.api.call("GET", "/.well-known/oauth-protected-resource/tools")
    unknown = mcp.api.call("GET", "/.well-known/oauth-protected-resource/nothing")
    assert ours.status == 200 and other.status == 200
    assert ours.json == {
        "resource": RESOURCE,
        "authorization_servers": [ISSUER],
        "scopes_supported": ["memory", "entities", "reasoning", "ontology", "skills"],
        "bearer_methods_supported": ["header"],
    }
    assert other.json["resource"] == OTHER_RESOURCE
    assert unknown.status == 404


# -- registration ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ({}, "invalid_redirect_uri"),
        ({"redirect_uris": "http://127.0.0.1/cb"}, "invalid_redirect_uri"),
        ({"redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["http://evil.test.example/cb"]}, "invalid_redirect_uri"),
        ({"redirect_uris": ["https://app.test.example/cb#x"]}, "invalid_redirect_uri"),
        ({"redirect_uris": [CALLBACK], "token_endpoint_auth_method": "client_secret_basic"},
         "invalid_client_metadata"),
        ({"redirect_uris": [CALLBACK], "grant_types": ["client_credentials"]},
         "invalid_client_metadata"),
        ({"redirect_uris": [CALLBACK], "application_type": "desktop"},
         "invalid_client_metadata"),
    ],
)
def test_registration_refuses_bad_metadata(mcp: Mcp, body: dict[str, Any], error: str) -> None:
    answer = mcp.api.call("POST", "/v1/oauth/register", body=body)
    assert answer.status == 400, answer.body
    assert answer.json["error"] == error


def test_registration_accepts_app_schemes_and_ignores_unknown_metadata(mcp: Mcp) -> None:
    client = mcp.register(
        redirect_uris=["cursor://anysphere.cursor-mcp/oauth/callback", CALLBACK],
        software_id="x", logo_uri="https://app.test.example/logo.png",
    )
    assert client["redirect_uris"][0].startswith("cursor://")
    assert "software_id" not in client


def test_the_registration_limit_per_address_is_the_stages_setting(mcp: Mcp) -> None:
    settings = replace(mcp.services.settings, registration_limit=2)
    vars(mcp.services)["settings"] = settings  # before the limit is built (cached_property)

    answers = [
        mcp.api.call("POST", "/v1/oauth/register", body={"redirect_uris": [CALLBACK]})
        for _ in range(3)
    ]

    assert [a.status for a in answers] == [201, 201, 429]


def test_registration_is_limited_per_address(mcp: Mcp) -> None:
    from chalicelib.oauth.ratelimit import LIMIT

    answers = [
        mcp.api.call("POST", "/v1/oauth/register", body={"redirect_uris": [CALLBACK]})
        for _ in range(LIMIT + 1)
    ]
    assert [a.status for a in answers[:LIMIT]] == [201] * LIMIT
    refused = answers[LIMIT]
    assert refused.status == 429 and refused.json["error"] == "too_many_requests"
    assert 0 < int(refused.headers["Retry-After"]) <= 3600
    mcp.services.clock.advance(hours=1)  # type: ignore[attr-defined]
    later = mcp.api.call("POST", "/v1/oauth/register", body={"redirect_uris": [CALLBACK]})
    assert later.status == 201
