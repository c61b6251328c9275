"""Settings from the environment: TRUSTED_ISSUERS and local mode (no I/O)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.config import ConfigurationError, Settings, TrustedIssuer, parse_trusted_issuers

GOOD = {
    "issuer": "https://login.example.com/",
    "audience": "dashboard",
    "jwksUri": "https://login.example.com/.well-known/jwks.json",
}


def entries(*items: dict[str, Any]) -> str:
    return json.dumps(list(items))


def test_several_issuers_are_parsed_in_order_and_kept_verbatim() -> None:
    other = {**GOOD, "issuer": "https://accounts.example.org", "audience": "x"}
    parsed = parse_trusted_issuers(entries(GOOD, other), local_mode=False)
    assert parsed == (
        TrustedIssuer("https://login.example.com/", "dashboard", GOOD["jwksUri"]),
        TrustedIssuer("https://accounts.example.org", "x", GOOD["jwksUri"]),
    )


@pytest.mark.parametrize("text", ["", "  ", "[]"])
def test_no_trusted_issuers_is_a_valid_configuration(text: str) -> None:
    assert parse_trusted_issuers(text, local_mode=False) == ()


@pytest.mark.parametrize(
    "text",
    [
        "{",  # not JSON
        json.dumps(GOOD),  # not a list
        entries({**GOOD, "jwks_uri": "https://x.example/jwks"}),  # a misspelt field
        entries({k: v for k, v in GOOD.items() if k != "audience"}),
        entries({**GOOD, "audience": ""}),
        entries({**GOOD, "audience": ["a", "b"]}),
        entries({**GOOD, "issuer": "ftp://login.example.com"}),
        entries({**GOOD, "issuer": "https://login.example.com/#frag"}),
        entries({**GOOD, "issuer": "https://login.example.com/?tenant=1"}),
        entries({**GOOD, "jwksUri": "file:///etc/passwd"}),
        entries(GOOD, GOOD),  # the same issuer twice
    ],
)
def test_malformed_trusted_issuers_are_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_trusted_issuers(text, local_mode=True)


def test_http_issuer_is_refused_outside_local_mode() -> None:
    local = {**GOOD, "issuer": "http://127.0.0.1:8001", "jwksUri": "http://127.0.0.1:8001/jwks.json"}
    with pytest.raises(ValueError, match="https"):
        parse_trusted_issuers(entries(local), local_mode=False)
    assert parse_trusted_issuers(entries(local), local_mode=True)[0].issuer == local["issuer"]


def test_http_issuer_on_another_host_is_refused_even_in_local_mode() -> None:
    remote = {**GOOD, "issuer": "http://login.example.com"}
    with pytest.raises(ValueError, match="loopback"):
        parse_trusted_issuers(entries(remote), local_mode=True)


BASE_ENV = {
    "AUTH_TABLE": "t",
    "KEY_ENCRYPTION_KEY_ID": "alias/k",
    "REFRESH_TOKEN_KEY_ID": "alias/r",
    "TOKEN_SIGNING_KEY_ID": "alias/s",
    "TOKEN_ISSUER": "https://auth.example.com",
}
LOCAL_ISSUER = entries(
    {"issuer": "http://127.0.0.1:8001", "audience": "a", "jwksUri": "http://127.0.0.1:8001/jwks.json"}
)


def test_settings_trust_the_development_issuer_only_in_local_mode() -> None:
    local = Settings.from_env({**BASE_ENV, "LOCAL_MODE": "1", "TRUSTED_ISSUERS": LOCAL_ISSUER})
    assert local.local_mode is True
    assert local.trusted_issuers[0].issuer == "http://127.0.0.1:8001"
    with pytest.raises(ConfigurationError):
        Settings.from_env({**BASE_ENV, "TRUSTED_ISSUERS": LOCAL_ISSUER})


def test_local_mode_is_ignored_inside_lambda() -> None:
    env = {**BASE_ENV, "LOCAL_MODE": "1", "AWS_LAMBDA_FUNCTION_NAME": "memory-auth-prod"}
    assert Settings.from_env(env).local_mode is False
    with pytest.raises(ConfigurationError):
        Settings.from_env({**env, "TRUSTED_ISSUERS": LOCAL_ISSUER})


def test_reading_the_configuration_loads_no_sign_in_code() -> None:
    """TRUSTED_ISSUERS is parsed here, so the authorizer's cold start (which reads the
    configuration) never loads the OpenID module, PyJWT or Powertools."""
    import subprocess
    import sys
    from pathlib import Path

    child = (
        "import sys, chalicelib.config; "
        "print(sorted(m for m in sys.modules if m.startswith(('chalicelib', 'jwt', 'aws_lambda'))))"
    )
    project = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        [sys.executable, "-c", child], cwd=project, capture_output=True, text=True, check=True
    )
    # MCP_RESOURCES and LOGIN_PROVIDER too are parsed in the floor, standard library only.
    assert result.stdout.strip() == "['chalicelib', 'chalicelib.config', 'chalicelib.records']"


def test_every_configuration_problem_is_listed_in_one_error() -> None:
    env = {
        key: value for key, value in BASE_ENV.items() if key not in ("AUTH_TABLE", "TOKEN_ISSUER")
    }
    env.update(
        ALLOWED_ORIGINS='["https://app.example.com/"]',
        MCP_RESOURCES='["https://memory.example.com/"]',
        MCP_REGISTRATION_LIMIT="lots",
        TRUSTED_ISSUERS="not json",
        SECRET_SCANNING_KEYS_URL="ftp://keys.example.com",
    )

    with pytest.raises(ConfigurationError) as raised:
        Settings.from_env(env)

    problems = str(raised.value).splitlines()
    named = [line.split()[0].split("[")[0].rstrip(":.") for line in problems]
    assert sorted(named) == sorted(
        [
            "TRUSTED_ISSUERS",
            "ALLOWED_ORIGINS",
            "MCP_RESOURCES",
            "MCP_REGISTRATION_LIMIT",
            "SECRET_SCANNING_KEYS_URL",
            "environment",
            "environment",
        ]
    )
    assert "environment variable AUTH_TABLE is not set" in problems
    assert "environment variable TOKEN_ISSUER is not set" in problems


def test_a_login_provider_is_not_held_to_trusted_issuers_that_did_not_parse() -> None:
    env = {
        **BASE_ENV,
        "TRUSTED_ISSUERS": "[",
        "LOGIN_PROVIDER": '{"issuer": "https://id.example.com", "clientId": "c"}',
    }

    with pytest.raises(ConfigurationError) as raised:
        Settings.from_env(env)

    assert str(raised.value) == "TRUSTED_ISSUERS is not valid JSON"


def test_the_first_webhook_retry_is_shortened_in_local_mode_only() -> None:
    local = Settings.from_env({**BASE_ENV, "LOCAL_MODE": "1", "WEBHOOK_FIRST_RETRY_SECONDS": "1"})
    deployed = Settings.from_env({**BASE_ENV, "WEBHOOK_FIRST_RETRY_SECONDS": "1"})

    assert local.webhook_first_retry_seconds == 1
    assert deployed.webhook_first_retry_seconds is None
    with pytest.raises(ConfigurationError, match="WEBHOOK_FIRST_RETRY_SECONDS"):
        Settings.from_env({**BASE_ENV, "LOCAL_MODE": "1", "WEBHOOK_FIRST_RETRY_SECONDS": "0"})


def test_the_work_queue_is_named_by_webhook_queue_name() -> None:
    named = Settings.from_env({**BASE_ENV, "WEBHOOK_QUEUE_NAME": "memory-auth-dev-webhooks"})

    assert named.webhook_queue_name == "memory-auth-dev-webhooks"
    assert Settings.from_env(BASE_ENV).webhook_queue_name is None
