"""DASHBOARD_LOGIN: the dashboard's login provider, checked against TRUSTED_ISSUERS."""

from __future__ import annotations

import json

import pytest

from chalicelib.config import TrustedIssuer
from chalicelib.dashboard.sign_in import DashboardLogin, parse_dashboard_login

ISSUER = "https://login.example.test"
CLIENT = "dashboard-client"
TRUSTED = (TrustedIssuer(ISSUER, CLIENT, f"{ISSUER}/jwks"),)
LOCAL_ISSUER = "http://127.0.0.1:8001"
LOCAL_TRUSTED = (TrustedIssuer(LOCAL_ISSUER, "memory-auth-local", f"{LOCAL_ISSUER}/jwks.json"),)


def parse(value: object, trusted=TRUSTED, local_mode: bool = False) -> DashboardLogin | None:
    return parse_dashboard_login(json.dumps(value), trusted, local_mode)


def test_an_issuer_trusted_with_the_client_id_as_audience() -> None:
    login = parse({"issuer": ISSUER, "clientId": CLIENT})
    assert login == DashboardLogin(ISSUER, CLIENT)
    assert login.connect_origins() == (ISSUER,)
    assert login.resource() == {"issuer": ISSUER, "clientId": CLIENT}


def test_unset_means_no_sign_in() -> None:
    assert parse_dashboard_login("", TRUSTED, False) is None
    assert parse_dashboard_login("  ", TRUSTED, False) is None


def test_a_token_endpoint_on_another_origin_joins_the_origins_the_page_may_call() -> None:
    token_endpoint = "https://t.example.test/oauth2/token"
    login = parse({"issuer": ISSUER, "clientId": CLIENT, "tokenEndpoint": token_endpoint})
    assert login is not None
    assert login.connect_origins() == (ISSUER, "https://t.example.test")
    assert login.resource()["tokenEndpoint"] == token_endpoint


def test_the_development_issuer_over_http_in_local_mode() -> None:
    login = parse(
        {
            "issuer": LOCAL_ISSUER,
            "clientId": "memory-auth-local",
            "tokenEndpoint": f"{LOCAL_ISSUER}/token",
        },
        LOCAL_TRUSTED,
        local_mode=True,
    )
    assert login is not None
    assert login.connect_origins() == (LOCAL_ISSUER,)


def entry(**fields: object) -> str:
    return json.dumps({"issuer": ISSUER, "clientId": CLIENT, **fields})


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps([ISSUER]), "JSON object"),
        (json.dumps({"issuer": ISSUER}), "JSON object"),
        (entry(secret="x"), "JSON object"),
        (entry(clientId=""), "clientId"),
        (entry(issuer="https://other.example.test"), "TRUSTED_ISSUERS"),
        (entry(clientId="another-client"), "TRUSTED_ISSUERS"),
        (entry(issuer=ISSUER + "/"), "TRUSTED_ISSUERS"),
        (entry(tokenEndpoint="http://t.example.test/token"), "https"),
        (entry(tokenEndpoint="http://127.0.0.1:9/token"), "https"),
        (entry(tokenEndpoint="https://t.example.test/t?x=1"), "query"),
    ],
)
def test_a_value_that_cannot_work_is_refused_with_its_reason(value: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_dashboard_login(value, TRUSTED, local_mode=False)
