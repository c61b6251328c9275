"""DPoP through the MCP authorization server (RFC 9449 §5): an authorization code redeemed
with a proof gives a DPoP-bound access token and a bound refresh token; at the MCP resource
(the data-plane authorizer) the token works only with a proof by its key."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import pytest

from chalicelib.decisions.authorizer import Unauthorized
from tests.fixtures.dpop import DpopKey
from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import ISSUER, Invoke
from tests.functional.oauth_server.conftest import FORM, Browser, Mcp, code_grant, pkce

TOKEN = "/v1/oauth/token"


def token_request(mcp: Mcp, fields: dict[str, str], proof: str | None) -> Any:
    headers = {**FORM, **({"DPoP": proof} if proof is not None else {})}
    return mcp.api.call("POST", TOKEN, raw=urlencode(fields).encode(), headers=headers)


def with_nonce(mcp: Mcp, pair: DpopKey, fields: dict[str, str]) -> Any:
    """The token request as a DPoP client makes it: asked for the nonce, then with it."""
    first = token_request(mcp, fields, pair.proof("POST", ISSUER + TOKEN))
    assert first.json["error"] == "use_dpop_nonce", first.body
    nonce = first.headers["DPoP-Nonce"]
    return token_request(mcp, fields, pair.proof("POST", ISSUER + TOKEN, claims={"nonce": nonce}))


def code_for(mcp: Mcp, subject: str, client_id: str | None = None) -> tuple[str, str, str]:
    _, workspace = mcp.person(subject)
    client_id = client_id or mcp.serve_document()
    verifier, challenge = pkce()
    browser = Browser(mcp)
    answer = browser.authorize(client_id, challenge)
    _, form = browser.consent_form(browser.sign_in(answer, subject))
    decided = browser.decide(form, workspace=workspace)
    return client_id, decided.headers["Location"].split("code=")[1].split("&")[0], verifier


def mcp_event(token: str, pair: DpopKey | None) -> dict[str, Any]:
    if pair is None:
        return request_event("/mcp", bearer(token))
    event = request_event("/mcp", f"DPoP {token}")
    context = event["requestContext"]
    proof = pair.proof("POST", f"https://{context['domainName']}{context['path']}", token)
    event["httpMethod"] = "POST"
    event["headers"]["DPoP"] = proof
    event["multiValueHeaders"]["DPoP"] = [proof]
    return event


def test_an_mcp_client_with_dpop_gets_a_bound_token_that_works_only_with_its_key(
    mcp: Mcp, authorize: Invoke
) -> None:
    pair = DpopKey()
    client_id, code, verifier = code_for(mcp, "dora")

    issued = with_nonce(mcp, pair, code_grant(client_id, code, verifier))

    assert issued.status == 200, issued.body
    assert issued.json["token_type"] == "DPoP"
    token = issued.json["access_token"]
    allowed = authorize(mcp_event(token, pair))
    assert allowed["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    with pytest.raises(Unauthorized):
        authorize(mcp_event(token, None))  # a copy sent as Bearer
    with pytest.raises(Unauthorized):
        authorize(mcp_event(token, DpopKey()))  # a proof by another key


def test_an_mcp_clients_bound_refresh_token_needs_its_key(mcp: Mcp) -> None:
    pair = DpopKey()
    client_id, code, verifier = code_for(mcp, "erin")
    issued = with_nonce(mcp, pair, code_grant(client_id, code, verifier)).json
    refresh = {
        "grant_type": "refresh_token",
        "refresh_token": issued["refresh_token"],
        "client_id": client_id,
    }

    stolen = token_request(mcp, refresh, None)
    holder = with_nonce(mcp, pair, refresh)

    assert (stolen.status, stolen.json["error"]) == (400, "invalid_grant")
    assert holder.status == 200, holder.body
    assert holder.json["token_type"] == "DPoP"


def test_a_client_registered_with_dpop_bound_access_tokens_gets_no_bearer_token(
    mcp: Mcp,
) -> None:
    pair = DpopKey()
    registered = mcp.register(dpop_bound_access_tokens=True)
    client_id, code, verifier = code_for(mcp, "fay", registered["client_id"])

    without = token_request(mcp, code_grant(client_id, code, verifier), None)
    with_proof = with_nonce(mcp, pair, code_grant(client_id, code, verifier))

    assert registered["dpop_bound_access_tokens"] is True
    assert (without.status, without.json["error"]) == (400, "invalid_dpop_proof")
    assert with_proof.status == 200, with_proof.body  # the refused request spent no code
    assert with_proof.json["token_type"] == "DPoP"


def test_a_metadata_document_with_dpop_bound_access_tokens_needs_a_proof(mcp: Mcp) -> None:
    client_id = mcp.serve_document(dpop_bound_access_tokens=True)
    _, code, verifier = code_for(mcp, "gus", client_id)

    without = token_request(mcp, code_grant(client_id, code, verifier), None)

    assert (without.status, without.json["error"]) == (400, "invalid_dpop_proof")


def test_dpop_bound_access_tokens_must_be_a_json_boolean(mcp: Mcp) -> None:
    body = {"redirect_uris": ["https://app.example/cb"], "dpop_bound_access_tokens": "true"}

    answer = mcp.api.call("POST", "/v1/oauth/register", body=body)

    assert (answer.status, answer.json["error"]) == (400, "invalid_client_metadata")
