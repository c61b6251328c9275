"""ENTERPRISE_IDPS parsing: the enterprise IdPs whose ID-JAGs are trusted (no I/O)."""

from __future__ import annotations

import pytest

from chalicelib.config import ConfigurationError, EnterpriseIdp, Settings, parse_enterprise_idps

OKTA = '{"issuer": "https://acme.okta.com", "jwksUri": "https://acme.okta.com/keys"}'


def test_a_list_of_issuers_and_jwks_uris_is_parsed_in_order() -> None:
    other = '{"issuer": "https://login.acme.example", "jwksUri": "https://login.acme.example/j"}'

    assert parse_enterprise_idps(f"[{OKTA}, {other}]", False) == (
        EnterpriseIdp("https://acme.okta.com", "https://acme.okta.com/keys"),
        EnterpriseIdp("https://login.acme.example", "https://login.acme.example/j"),
    )
    assert parse_enterprise_idps("", False) == ()


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{", "not valid JSON"),
        (OKTA, "must be a JSON list"),
        ('[{"issuer": "https://a.example"}]', "exactly the fields issuer, jwksUri"),
        ('[{"issuer": "http://a.example", "jwksUri": "https://a.example/k"}]', "must use https"),
        (f"[{OKTA}, {OKTA}]", "listed twice"),
    ],
)
def test_a_bad_list_is_refused_naming_the_problem(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_enterprise_idps(text, False)


def test_loopback_http_is_allowed_in_local_mode_only() -> None:
    local = '[{"issuer": "http://127.0.0.1:8001", "jwksUri": "http://127.0.0.1:8001/jwks.json"}]'

    assert parse_enterprise_idps(local, True)[0].issuer == "http://127.0.0.1:8001"
    with pytest.raises(ValueError, match="https"):
        parse_enterprise_idps(local, False)


def test_a_bad_setting_stops_the_service_with_its_name() -> None:
    env = {
        "AUTH_TABLE": "t",
        "KEY_ENCRYPTION_KEY_ID": "k",
        "TOKEN_SIGNING_KEY_ID": "s",
        "TOKEN_ISSUER": "https://auth.example",
        "REFRESH_TOKEN_KEY_ID": "r",
        "ENTERPRISE_IDPS": "[1]",
    }

    with pytest.raises(ConfigurationError, match="ENTERPRISE_IDPS"):
        Settings.from_env(env)
