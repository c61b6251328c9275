"""One token endpoint: `POST /v1/oauth/token` serves token exchange with the grants that serve
`/v1/auth/exchange` (the same answers), and `grant_types_supported` is the registry's."""

from __future__ import annotations

import pytest

from chalicelib.api.grants import registry
from chalicelib.runtime import Services
from tests.functional.conftest import Api
from tests.functional.oauth import (
    ACCESS_TOKEN_TYPE,
    EXCHANGE,
    TOKEN_EXCHANGE,
    assert_oauth_error,
    exchange,
    form,
    trust,
)
from tests.oidc_issuer import FakeIssuer

TOKEN = "/v1/oauth/token"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"


@pytest.fixture
def idp(services: Services) -> FakeIssuer:
    issuer = FakeIssuer()
    trust(services, issuer)
    return issuer


def login_form(id_token: str) -> dict[str, str]:
    return {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": id_token,
        "subject_token_type": ID_TOKEN_TYPE,
    }


def test_a_login_at_the_token_endpoint_answers_as_the_exchange_200(
    api: Api, idp: FakeIssuer
) -> None:
    at_token = form(api, TOKEN, login_form(idp.id_token()))
    at_exchange = form(api, EXCHANGE, login_form(idp.id_token()))

    assert (at_token.status, at_exchange.status) == (200, 200)
    assert set(at_token.json) == set(at_exchange.json) == {
        "access_token", "token_type", "expires_in", "refresh_token", "issued_token_type",
    }
    assert at_token.headers["Cache-Control"] == "no-store"


def test_a_delegation_at_the_token_endpoint_is_the_exchanges_200(api: Api, alice: str) -> None:
    workspace = api.workspace(alice)
    fields = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": alice,
        "subject_token_type": ACCESS_TOKEN_TYPE,
        "workspace_id": workspace,
        "scope": "memory",
        "expires_in": "300",
    }

    answer = form(api, TOKEN, fields)

    assert answer.status == 200, answer.body
    assert (answer.json["scope"], answer.json["expires_in"]) == ("memory", 300)


def test_a_login_refresh_token_at_the_mcp_token_endpoint_stays_400_invalid_grant(
    api: Api, idp: FakeIssuer
) -> None:
    pair = exchange(api, idp.id_token()).json

    answer = form(
        api,
        TOKEN,
        {"grant_type": "refresh_token", "refresh_token": pair["refresh_token"], "client_id": "c"},
    )

    assert_oauth_error(answer, 400, "invalid_grant")


def test_an_unknown_grant_type_at_every_token_endpoint_is_400_unsupported_grant_type(
    api: Api,
) -> None:
    at_token = form(api, TOKEN, {"grant_type": "password", "client_id": "c"})
    at_exchange = form(api, EXCHANGE, {"grant_type": "password"})

    assert_oauth_error(at_token, 400, "unsupported_grant_type")
    assert_oauth_error(at_exchange, 400, "unsupported_grant_type")


def test_the_metadata_lists_each_registered_grant_of_the_token_endpoint_once(api: Api) -> None:
    body = api.call("GET", "/.well-known/oauth-authorization-server").json

    listed = body["grant_types_supported"]

    assert listed == registry.grant_types()
    assert len(set(listed)) == len(listed)
    assert set(listed) >= {
        "authorization_code",
        "refresh_token",
        TOKEN_EXCHANGE,
        "urn:ietf:params:oauth:grant-type:jwt-bearer",
    }
