"""The consent and error pages' stylesheet: served from our origin, allowed by their CSP."""

from __future__ import annotations

from tests.functional.oauth_server.conftest import Browser, Mcp, pkce


def test_the_pages_stylesheet_is_served_as_css_from_our_origin(mcp: Mcp) -> None:
    answer = mcp.api.call("GET", "/v1/oauth/pages.css")

    assert answer.status == 200
    assert answer.headers["Content-Type"] == "text/css; charset=utf-8"
    assert answer.headers["X-Content-Type-Options"] == "nosniff"
    assert b"--accent: #1d4ed8" in answer.body  # the dashboard's palette


def test_an_error_page_links_the_stylesheet_its_policy_allows(mcp: Mcp) -> None:
    _, challenge = pkce()
    answer = Browser(mcp).authorize("cli_01NOSUCHCLIENT0000000000000", challenge)

    assert answer.status == 400
    assert b'<link rel="stylesheet" href="https://auth.test.example/v1/oauth/pages.css">' in (
        answer.body
    )
    assert "style-src 'self';" in answer.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in answer.headers["Content-Security-Policy"]
