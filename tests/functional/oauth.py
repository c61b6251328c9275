"""Calls to the token endpoints, shared by test_exchange*.py and test_refresh*.py."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from chalicelib.runtime import Services
from chalicelib.sessions.openid import IdTokenVerifier
from tests.functional.conftest import Answer, Api
from tests.oidc_issuer import FakeIssuer, jwks_clients

EXCHANGE = "/v1/auth/exchange"
REFRESH = "/v1/auth/refresh"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


def trust(services: Services, *issuers: FakeIssuer) -> None:
    """The exchange trusts exactly these in-memory issuers."""
    services.id_tokens = IdTokenVerifier(  # type: ignore[misc]
        [issuer.trusted for issuer in issuers], jwks_clients(*issuers)
    )


def exchange(api: Api, id_token: str) -> Answer:
    return api.call("POST", EXCHANGE, body={"id_token": id_token})


def refresh(api: Api, refresh_token: object) -> Answer:
    return api.call("POST", REFRESH, body={"refresh_token": refresh_token})


def form(api: Api, path: str, fields: dict[str, str] | list[tuple[str, str]]) -> Answer:
    return api.call("POST", path, raw=urlencode(fields).encode(), headers=FORM)


def assert_oauth_error(answer: Answer, status: int, error: str) -> None:
    assert answer.status == status, answer.body
    assert set(answer.json) == {"error", "error_description"}
    assert answer.json["error"] == error
    assert answer.headers["Cache-Control"] == "no-store"


def delegate(api: Api, subject: str, **fields: Any) -> Answer:
    """The RFC 8693 form; `fields` as strings (workspace_id, scope, expires_in, actor)."""
    return form(
        api,
        EXCHANGE,
        {
            "grant_type": TOKEN_EXCHANGE,
            "subject_token": subject,
            "subject_token_type": ACCESS_TOKEN_TYPE,
            **{name: str(value) for name, value in fields.items()},
        },
    )


def delegated(api: Api, subject: str, **fields: Any) -> str:
    answer = delegate(api, subject, **fields)
    assert answer.status == 200, answer.body
    return str(answer.json["access_token"])
