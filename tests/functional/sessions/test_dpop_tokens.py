"""DPoP at the token endpoints (RFC 9449 §5, §8): a proof makes the access token bound
(`token_type` DPoP, `cnf.jkt`) and the refresh token's family bound to the same key; a proof
needs the server's nonce (`use_dpop_nonce` with `DPoP-Nonce`); the metadata lists the
algorithms. Shown with the login exchange, the refresh and the delegation grants, which all
go through the one place that serves a token request."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import jwt
import pytest

from chalicelib.runtime import Services
from tests.fixtures.dpop import DpopKey
from tests.functional.conftest import ISSUER, Api
from tests.functional.oauth import (
    ACCESS_TOKEN_TYPE,
    EXCHANGE,
    FORM,
    REFRESH,
    TOKEN_EXCHANGE,
    assert_oauth_error,
    trust,
)
from tests.oidc_issuer import FakeIssuer

WHOAMI = "/v1/auth/whoami"


@pytest.fixture
def idp(services: Services) -> FakeIssuer:
    issuer = FakeIssuer()
    trust(services, issuer)
    return issuer


@pytest.fixture(scope="module")
def pair() -> DpopKey:
    return DpopKey()


def nonce(api: Api, pair: DpopKey, path: str, body: dict[str, Any]) -> str:
    """The nonce the endpoint asks for: a first proof without one is `use_dpop_nonce`."""
    answer = api.call(
        "POST", path, body=body, headers={"DPoP": pair.proof("POST", ISSUER + path)}
    )
    assert_oauth_error(answer, 400, "use_dpop_nonce")
    return answer.headers["DPoP-Nonce"]


def with_proof(api: Api, pair: DpopKey, path: str, body: dict[str, Any], **claims: Any) -> Any:
    # Made at the service's (frozen, movable) time, as a client with a synced clock would.
    now = api.services.clock.now().timestamp()
    proof = pair.proof("POST", ISSUER + path, iat=now, claims=claims)
    return api.call("POST", path, body=body, headers={"DPoP": proof})


def claims_of(token: str) -> dict[str, Any]:
    return dict(jwt.decode(token, options={"verify_signature": False}))


def test_a_token_request_with_a_proof_but_no_nonce_is_use_dpop_nonce_with_the_nonce(
    api: Api, idp: FakeIssuer, pair: DpopKey
) -> None:
    answer = api.call(
        "POST",
        EXCHANGE,
        body={"id_token": idp.id_token("alice")},
        headers={"DPoP": pair.proof("POST", ISSUER + EXCHANGE)},
    )

    assert_oauth_error(answer, 400, "use_dpop_nonce")
    assert len(answer.headers["DPoP-Nonce"]) == 43


def test_a_stale_nonce_is_use_dpop_nonce_again(
    api: Api, idp: FakeIssuer, pair: DpopKey, services: Services
) -> None:
    old = nonce(api, pair, EXCHANGE, {"id_token": idp.id_token("alice")})
    services.clock.advance(seconds=601)  # two windows later

    answer = with_proof(api, pair, EXCHANGE, {"id_token": idp.id_token("alice")}, nonce=old)

    assert_oauth_error(answer, 400, "use_dpop_nonce")
    assert answer.headers["DPoP-Nonce"] != old


def test_the_login_exchange_with_a_proof_issues_a_dpop_bound_token(
    api: Api, idp: FakeIssuer, pair: DpopKey
) -> None:
    current = nonce(api, pair, EXCHANGE, {"id_token": idp.id_token("alice")})

    answer = with_proof(api, pair, EXCHANGE, {"id_token": idp.id_token("alice")}, nonce=current)

    assert answer.status == 200, answer.body
    token = answer.json["access_token"]
    assert answer.json["token_type"] == "DPoP"
    assert claims_of(token)["cnf"] == {"jkt": pair.jkt}
    as_bearer = api.call("GET", WHOAMI, token)
    with_key = api.call(
        "GET",
        WHOAMI,
        headers={
            "Authorization": f"DPoP {token}",
            "DPoP": pair.proof("GET", ISSUER + WHOAMI, token),
        },
    )
    assert (as_bearer.status, as_bearer.code) == (401, "dpop_required")
    assert with_key.status == 200, with_key.body


def test_a_bound_refresh_token_needs_a_proof_by_the_same_key(
    api: Api, idp: FakeIssuer, pair: DpopKey
) -> None:
    current = nonce(api, pair, EXCHANGE, {"id_token": idp.id_token("alice")})
    signed_in = with_proof(
        api, pair, EXCHANGE, {"id_token": idp.id_token("alice")}, nonce=current
    ).json
    body = {"refresh_token": signed_in["refresh_token"]}

    stolen = api.call("POST", REFRESH, body=body)
    other_key = with_proof(api, DpopKey(), REFRESH, body, nonce=current)
    holder = with_proof(api, pair, REFRESH, body, nonce=current)

    assert_oauth_error(stolen, 400, "invalid_grant")
    assert "DPoP" in stolen.json["error_description"]
    assert_oauth_error(other_key, 400, "invalid_grant")
    assert holder.status == 200, holder.body  # neither refused attempt revoked anything
    assert holder.json["token_type"] == "DPoP"
    assert claims_of(holder.json["access_token"])["cnf"] == {"jkt": pair.jkt}


def test_a_token_request_without_a_proof_stays_bearer(api: Api, idp: FakeIssuer) -> None:
    answer = api.call("POST", EXCHANGE, body={"id_token": idp.id_token("alice")})

    assert answer.json["token_type"] == "Bearer"
    assert "cnf" not in claims_of(answer.json["access_token"])


@pytest.mark.parametrize("wrong", ["url", "method", "alg none"])
def test_a_token_request_with_a_bad_proof_is_invalid_dpop_proof(
    api: Api, idp: FakeIssuer, pair: DpopKey, wrong: str
) -> None:
    from tests.fixtures.dpop import unsigned

    current = nonce(api, pair, EXCHANGE, {"id_token": idp.id_token("alice")})
    proof = {
        "url": lambda: pair.proof("POST", ISSUER + REFRESH, claims={"nonce": current}),
        "method": lambda: pair.proof("GET", ISSUER + EXCHANGE, claims={"nonce": current}),
        "alg none": lambda: unsigned(
            {"typ": "dpop+jwt", "alg": "none", "jwk": pair.jwk},
            {"jti": "j", "htm": "POST", "htu": ISSUER + EXCHANGE, "iat": 0, "nonce": current},
        ),
    }[wrong]()

    answer = api.call(
        "POST", EXCHANGE, body={"id_token": idp.id_token("alice")}, headers={"DPoP": proof}
    )

    assert_oauth_error(answer, 400, "invalid_dpop_proof")


def test_a_delegation_with_a_proof_is_bound_too(api: Api, alice: str, pair: DpopKey) -> None:
    ws = api.workspace(alice)
    fields = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": alice,
        "subject_token_type": ACCESS_TOKEN_TYPE,
        "workspace_id": ws,
    }

    def delegate_with(proof: str) -> Any:
        return api.call(
            "POST", EXCHANGE, raw=urlencode(fields).encode(), headers={**FORM, "DPoP": proof}
        )

    first = delegate_with(pair.proof("POST", ISSUER + EXCHANGE))
    current = first.headers["DPoP-Nonce"]
    answer = delegate_with(pair.proof("POST", ISSUER + EXCHANGE, claims={"nonce": current}))

    assert_oauth_error(first, 400, "use_dpop_nonce")
    assert answer.status == 200, answer.body
    assert answer.json["token_type"] == "DPoP"
    assert claims_of(answer.json["access_token"])["cnf"] == {"jkt": pair.jkt}


def test_the_metadata_lists_the_dpop_algorithms(api: Api) -> None:
    answer = api.call("GET", "/.well-known/oauth-authorization-server")

    assert answer.json["dpop_signing_alg_values_supported"] == ["ES256", "RS256", "EdDSA"]
