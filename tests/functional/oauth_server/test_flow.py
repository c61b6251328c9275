"""An MCP client's whole authorization, then its tokens at the resource and at the token
endpoint: registered by metadata document and by DCR, refreshed, revoked."""

from __future__ import annotations

import jwt

from tests.functional.conftest import ISSUER
from tests.functional.oauth_server.conftest import (
    CALLBACK,
    RESOURCE,
    Browser,
    Mcp,
    code_grant,
    pkce,
)


def test_a_metadata_document_client_gets_tokens_for_the_resource_and_workspace(mcp: Mcp) -> None:
    _, workspace = mcp.person("alice")
    client_id = mcp.serve_document()
    verifier, challenge = pkce()
    code = Browser(mcp).code_for(client_id, challenge, workspace=workspace)

    answer = mcp.token(code_grant(client_id, code, verifier))

    assert answer.status == 200, answer.body
    assert answer.headers["Cache-Control"] == "no-store"
    body = answer.json
    assert set(body) == {"access_token", "token_type", "expires_in", "refresh_token", "scope"}
    assert (body["token_type"], body["expires_in"]) == ("Bearer", 3600)
    assert body["scope"] == "memory entities reasoning ontology skills"
    header = jwt.get_unverified_header(body["access_token"])
    claims = jwt.decode(body["access_token"], options={"verify_signature": False})
    assert header["typ"] == "at+jwt" and header["alg"] == "RS256"
    assert claims["aud"] == RESOURCE and claims["iss"] == ISSUER
    assert claims["client_id"] == client_id and claims["workspace_id"] == workspace
    assert claims["scope"] == body["scope"] and claims["sub"].startswith("usr_")


def test_a_registered_client_gets_tokens_too(mcp: Mcp) -> None:
    mcp.person("bob")
    client = mcp.register()
    verifier, challenge = pkce()
    code = Browser(mcp).code_for(client["client_id"], challenge, subject="bob")

    answer = mcp.token(code_grant(client["client_id"], code, verifier))

    assert answer.status == 200, answer.body
    assert client["client_id"].startswith("cli_")
    assert client["token_endpoint_auth_method"] == "none"
    assert client["redirect_uris"] == [CALLBACK]


def test_refresh_rotates_and_a_reused_refresh_token_revokes_the_grant(mcp: Mcp) -> None:
    mcp.person("carol")
    client_id = mcp.serve_document()
    verifier, challenge = pkce()
    code = Browser(mcp).code_for(client_id, challenge, subject="carol")
    first = mcp.token(code_grant(client_id, code, verifier)).json

    refreshed = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"],
         "client_id": client_id, "resource": RESOURCE}
    )
    assert refreshed.status == 200, refreshed.body
    assert refreshed.json["refresh_token"] != first["refresh_token"]
    replayed = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": first["refresh_token"],
         "client_id": client_id}
    )
    successor = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": refreshed.json["refresh_token"],
         "client_id": client_id}
    )

    assert replayed.status == 400 and replayed.json["error"] == "invalid_grant"
    assert successor.status == 400 and successor.json["error"] == "invalid_grant"
