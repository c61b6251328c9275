"""SECRET_SCANNING_KEYS_URL and EVENT_BUS_NAME as the configuration reads them."""

from __future__ import annotations

import pytest

from chalicelib.config import GITHUB_SECRET_SCANNING_KEYS, ConfigurationError, Settings

BASE_ENV = {
    "AUTH_TABLE": "t",
    "KEY_ENCRYPTION_KEY_ID": "alias/k",
    "REFRESH_TOKEN_KEY_ID": "alias/r",
    "TOKEN_SIGNING_KEY_ID": "alias/s",
    "TOKEN_ISSUER": "https://auth.example.com",
}


def test_githubs_published_list_is_the_default_and_no_bus_means_stored_only() -> None:
    settings = Settings.from_env(BASE_ENV)

    assert settings.secret_scanning_keys_url == GITHUB_SECRET_SCANNING_KEYS
    assert settings.event_bus_name is None


def test_both_are_read_from_the_environment() -> None:
    settings = Settings.from_env(
        {**BASE_ENV, "EVENT_BUS_NAME": "memory-auth-dev",
         "SECRET_SCANNING_KEYS_URL": "https://keys.example.com/list"}
    )

    assert settings.event_bus_name == "memory-auth-dev"
    assert settings.secret_scanning_keys_url == "https://keys.example.com/list"


@pytest.mark.parametrize("url", ["http://keys.example.com/list", "ftp://x/y", "keys"])
def test_a_key_list_url_that_is_not_https_is_a_configuration_error(url: str) -> None:
    with pytest.raises(ConfigurationError, match="SECRET_SCANNING_KEYS_URL"):
        Settings.from_env({**BASE_ENV, "SECRET_SCANNING_KEYS_URL": url})


def test_local_mode_allows_a_loopback_http_key_list_but_not_inside_lambda() -> None:
    local = {**BASE_ENV, "LOCAL_MODE": "1", "SECRET_SCANNING_KEYS_URL": "http://127.0.0.1:8002/k"}

    assert Settings.from_env(local).secret_scanning_keys_url.startswith("http://127.0.0.1")
    with pytest.raises(ConfigurationError):
        Settings.from_env({**local, "AWS_LAMBDA_FUNCTION_NAME": "memory-auth-dev"})
