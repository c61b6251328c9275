"""Every credential or configuration shape is matched whole: `$` in a regex also matches
before a trailing newline, so `re.match` let `value + "\\n"` pass (found by the property
tests for ids and keys; the same pattern stood in these places too)."""

from __future__ import annotations

import pytest

from chalicelib.config import parse_allowed_origins
from chalicelib.oauth.browser import cookie_name, secret_from
from chalicelib.sessions.refresh import looks_like_refresh_token

REFRESH = "rt" "_" + "a" * 43
COOKIE_SECRET = "b" * 43


def test_a_refresh_token_followed_by_a_newline_is_not_one() -> None:
    assert looks_like_refresh_token(REFRESH)
    assert not looks_like_refresh_token(REFRESH + "\n")


@pytest.mark.parametrize("suffix", ["", "\n"])
def test_an_authorization_cookie_followed_by_a_newline_is_not_one(suffix: str) -> None:
    header = f'{cookie_name(False)}="{COOKIE_SECRET}{suffix}"'

    found = secret_from(header, secure=False)

    assert found == (COOKIE_SECRET if not suffix else None)


def test_an_allowed_origin_followed_by_a_newline_is_refused() -> None:
    assert parse_allowed_origins('["https://app.example.com"]') == ("https://app.example.com",)
    with pytest.raises(ValueError):
        parse_allowed_origins('["https://app.example.com\\n"]')
