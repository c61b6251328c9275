"""ALLOWED_ORIGINS: a JSON list of exact origins, written as browsers send `Origin`."""

from __future__ import annotations

import pytest

from chalicelib.config import ConfigurationError, Settings, parse_allowed_origins


@pytest.mark.parametrize(
    ("text", "origins"),
    [
        ("", ()),
        ("[]", ()),
        ('["https://app.example.com"]', ("https://app.example.com",)),
        (
            '["https://app.example.com", "https://app.example.com:8443"]',
            ("https://app.example.com", "https://app.example.com:8443"),
        ),
        ('["http://localhost:5173", "http://127.0.0.1:3000"]',
         ("http://localhost:5173", "http://127.0.0.1:3000")),
        ('["http://[::1]:8080"]', ("http://[::1]:8080",)),
        ('["https://a.example", "https://a.example"]', ("https://a.example",)),
    ],
)
def test_valid_origin_lists(text: str, origins: tuple[str, ...]) -> None:
    assert parse_allowed_origins(text) == origins


@pytest.mark.parametrize(
    "text",
    [
        "https://app.example.com",  # not a JSON list
        '{"origin": "https://app.example.com"}',
        '["*"]',
        '["https://*.example.com"]',
        '["https://app.example.com/"]',
        '["https://app.example.com/path"]',
        '["https://App.Example.com"]',
        '["https://app.example.com:443"]',
        '["http://app.example.com"]',  # http only for loopback
        '["null"]',
        '["ftp://app.example.com"]',
        "[42]",
        '["https://user@app.example.com"]',
    ],
)
def test_anything_but_exact_origins_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        parse_allowed_origins(text)


def test_a_bad_list_stops_the_service_at_configuration() -> None:
    env = {
        "AUTH_TABLE": "t",
        "KEY_ENCRYPTION_KEY_ID": "k",
        "REFRESH_TOKEN_KEY_ID": "r",
        "TOKEN_SIGNING_KEY_ID": "s",
        "TOKEN_ISSUER": "https://auth.example.com",
        "ALLOWED_ORIGINS": '["*"]',
    }
    with pytest.raises(ConfigurationError):
        Settings.from_env(env)
    env["ALLOWED_ORIGINS"] = '["https://app.example.com"]'
    assert Settings.from_env(env).allowed_origins == ("https://app.example.com",)
