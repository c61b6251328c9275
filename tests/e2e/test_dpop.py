"""DPoP over real HTTP against the local stack: a DPoP-bound login (raw HTTP, the nonce asked
and given), and a key-bound key at the development MCP server (the data-plane authorizer's
decision, the URL it served as `htu`). Neither MCP SDK's client signs DPoP proofs (the
TypeScript SDK 1.32.2 and the Python `mcp` 2.3 know the metadata fields only), so raw HTTP
and our own SDKs (their e2e tests) show the flows."""

from __future__ import annotations

import httpx

from tests.e2e.conftest import Stack
from tests.e2e.test_mcp_oauth import person_with_workspace
from tests.fixtures.dpop import DpopKey

DPOP_TOKEN = 'DPoP error="invalid_token", algs="ES256 RS256 EdDSA"'


def test_a_login_with_a_proof_gets_a_dpop_bound_token_after_the_nonce(stack: Stack) -> None:
    pair = DpopKey()
    url = stack.endpoint + "/v1/auth/exchange"

    def exchange(nonce: str | None) -> httpx.Response:
        id_token = httpx.post(
            stack.info["idpEndpoint"] + "/token", json={"sub": "dpop-raw"}, timeout=10
        ).json()["id_token"]
        claims = {"nonce": nonce} if nonce else {}
        proof = pair.proof("POST", url, claims=claims)
        return httpx.post(url, json={"id_token": id_token}, headers={"DPoP": proof}, timeout=10)

    first = exchange(None)
    second = exchange(first.headers["DPoP-Nonce"])
    token = second.json()["access_token"]
    whoami = stack.endpoint + "/v1/auth/whoami"
    bound = httpx.get(
        whoami,
        headers={"Authorization": f"DPoP {token}", "DPoP": pair.proof("GET", whoami, token)},
        timeout=10,
    )
    copied = httpx.get(whoami, headers={"Authorization": f"Bearer {token}"}, timeout=10)

    assert (first.status_code, first.json()["error"]) == (400, "use_dpop_nonce")
    assert second.json()["token_type"] == "DPoP"
    assert bound.status_code == 200
    assert (copied.status_code, copied.json()["code"]) == (401, "dpop_required")
    assert copied.headers["www-authenticate"] == DPOP_TOKEN


def test_a_key_bound_key_at_the_development_mcp_server(stack: Stack) -> None:
    pair = DpopKey()
    token, workspace = person_with_workspace(stack, "dpop-mcp")
    created = stack.call(
        "POST",
        "/v1/auth/api-keys",
        token,
        body={"label": "bound", "category": "workspace", "workspaceId": workspace,
              "dpopJkt": pair.jkt},
    )
    key = created.json()["key"]
    mcp = stack.info["mcpResource"]
    body = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    holder = httpx.post(
        mcp,
        json=body,
        headers={**accept, "Authorization": f"DPoP {key}", "DPoP": pair.proof("POST", mcp, key)},
        timeout=10,
    )
    stolen = {**accept, "Authorization": f"Bearer {key}"}
    thief = httpx.post(mcp, json=body, headers=stolen, timeout=10)

    assert created.status_code == 201
    assert holder.status_code == 200, holder.text
    assert (thief.status_code, thief.json()["code"]) == (401, "dpop_required")
    assert thief.headers["www-authenticate"] == DPOP_TOKEN
