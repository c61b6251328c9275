"""POST /v1/auth/revoke: sign-out. A login refresh token revokes its whole family (RFC 7009);
the answer is 200 whatever was sent, so it tells nobody whether a token exists."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.runtime import Services
from tests.functional.conftest import Api
from tests.functional.failures import broken
from tests.functional.oauth import assert_oauth_error, exchange, form, refresh, trust
from tests.oidc_issuer import FakeIssuer

REVOKE = "/v1/auth/revoke"


@pytest.fixture
def signed_in(api: Api, services: Services) -> dict[str, Any]:
    issuer = FakeIssuer()
    trust(services, issuer)
    answer = exchange(api, issuer.id_token("alice"))
    assert answer.status == 200, answer.body
    return dict(answer.json)


def test_sign_out_revokes_the_refresh_token(api: Api, signed_in: dict[str, Any]) -> None:
    answer = api.call("POST", REVOKE, body={"token": signed_in["refresh_token"]})

    assert answer.status == 200
    assert answer.headers["Cache-Control"] == "no-store"
    assert_oauth_error(refresh(api, signed_in["refresh_token"]), 400, "invalid_grant")


def test_sign_out_revokes_every_successor_of_the_family(
    api: Api, signed_in: dict[str, Any]
) -> None:
    successor = refresh(api, signed_in["refresh_token"]).json["refresh_token"]

    answer = form(api, REVOKE, {"token": successor, "token_type_hint": "refresh_token"})

    assert answer.status == 200
    assert_oauth_error(refresh(api, successor), 400, "invalid_grant")


@pytest.mark.parametrize(
    "token", ["unknown", "rt" "_" + "A" * 43, "eyJhbGciOiJSUzI1NiJ9.e30.x"]
)
def test_sign_out_answers_200_for_unknown_tokens(api: Api, token: str) -> None:
    answer = api.call("POST", REVOKE, body={"token": token})

    assert answer.status == 200
    assert answer.body == b""


def test_signing_out_twice_answers_200_both_times(api: Api, signed_in: dict[str, Any]) -> None:
    first = api.call("POST", REVOKE, body={"token": signed_in["refresh_token"]})

    second = api.call("POST", REVOKE, body={"token": signed_in["refresh_token"]})

    assert (first.status, second.status) == (200, 200)


def test_sign_out_without_token_is_invalid_request(api: Api) -> None:
    answer = api.call("POST", REVOKE, body={})

    assert_oauth_error(answer, 400, "invalid_request")


def test_sign_out_when_dynamodb_fails_is_503(
    api: Api, signed_in: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(api.services.dynamodb, "get_item", broken)

    answer = api.call("POST", REVOKE, body={"token": signed_in["refresh_token"]})

    assert_oauth_error(answer, 503, "temporarily_unavailable")
