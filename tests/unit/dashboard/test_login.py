"""DASHBOARD_LOGIN: the dashboard's login provider, checked against TRUSTED_ISSUERS."""

from __future__ import annotations

import json

import pytest

from chalicelib.dashboard.login import DashboardLogin, parse_dashboard_login
from chalicelib.login.openid import TrustedIssuer

ISSUER = "https://login.example.test"
TRUSTED = (TrustedIssuer(ISSUER, "dashboard-client", f"{ISSUER}/jwks"),)
LOCAL_ISSUER = "http://127.0.0.1:8001"
LOCAL_TRUSTED = (TrustedIssuer(LOCAL_ISSUER, "memory-auth-local", f"{LOCAL_ISSUER}/jwks.json"),)


def parse(value: object, trusted=TRUSTED, local_mode: bool = False) -> DashboardLogin | None:
    return parse_dashboard_login(json.dumps(value), trusted, local_mode)


def test_an_issuer_trusted_with_the_client_id_as_audience() -> None:
    login = parse({"issuer": ISSUER, "clientId": "dashboard-client"})
    assert login == DashboardLogin(ISSUER, "dashboard-client")
    assert login.connect_origins() == (ISSUER,)
    assert login.resource() == {"issuer": ISSUER, "clientId": "dashboard-client"}


def test_unset_means_no_sign_in() -> None:
    assert parse_dashboard_login("", TRUSTED, False) is None
    assert parse_dashboard_login("  ", TRUSTED, False) is None


def test_a_token_endpoint_on_another_origin_joins_the_origins_the_page_may_call() -> None:
    login = parse(
        {"issuer": ISSUER, "clientId": "dashboard-client", "tokenEndpoint": "https://t.example.test/oauth2/token"}
    )
    assert login is not None
    assert login.connect_origins() == (ISSUER, "https://t.example.test")
    assert login.resource()["tokenEndpoint"] == "https://t.example.test/oauth2/token"


def test_the_development_issuer_over_http_in_local_mode() -> None:
    login = parse(
        {"issuer": LOCAL_ISSUER, "clientId": "memory-auth-local", "tokenEndpoint": f"{LOCAL_ISSUER}/token"},
        LOCAL_TRUSTED,
        local_mode=True,
    )
    assert login is not None
    assert login.connect_origins() == (LOCAL_ISSUER,)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("{not json", "not valid JSON"),
        (json.dumps(["https://login.example.test"]), "JSON object"),
        (json.dumps({"issuer": ISSUER}), "JSON object"),
        (json.dumps({"issuer": ISSUER, "clientId": "dashboard-client", "secret": "x"}), "JSON object"),
        (json.dumps({"issuer": ISSUER, "clientId": ""}), "clientId"),
        (json.dumps({"issuer": "https://other.example.test", "clientId": "dashboard-client"}), "TRUSTED_ISSUERS"),
        (json.dumps({"issuer": ISSUER, "clientId": "another-client"}), "TRUSTED_ISSUERS"),
        (json.dumps({"issuer": ISSUER + "/", "clientId": "dashboard-client"}), "TRUSTED_ISSUERS"),
        (
            json.dumps({"issuer": ISSUER, "clientId": "dashboard-client", "tokenEndpoint": "http://t.example.test/token"}),
            "https",
        ),
        (
            json.dumps({"issuer": ISSUER, "clientId": "dashboard-client", "tokenEndpoint": "http://127.0.0.1:9/token"}),
            "https",
        ),
        (
            json.dumps({"issuer": ISSUER, "clientId": "dashboard-client", "tokenEndpoint": "https://t.example.test/t?x=1"}),
            "query",
        ),
    ],
)
def test_a_value_that_cannot_work_is_refused_with_its_reason(value: str, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        parse_dashboard_login(value, TRUSTED, local_mode=False)
