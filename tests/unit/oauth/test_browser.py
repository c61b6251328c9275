"""The browser binding, the derived values, and the pages' escaping (no I/O)."""

from __future__ import annotations

from datetime import UTC, datetime

from chalicelib.oauth import browser, pages
from chalicelib.workspaces.model import Workspace


def test_the_cookie_round_trips_and_binds() -> None:
    secret = browser.new_secret()
    header = browser.set_cookie(secret, secure=True)
    assert header.startswith("__Host-mcp-authorization=")
    assert "HttpOnly" in header and "SameSite=Lax" in header and "Secure" in header
    assert "Path=/;" in header
    sent = header.split(";")[0]
    assert browser.secret_from(f"other=1; {sent}", secure=True) == secret
    assert browser.secret_from(sent, secure=False) is None  # another name over plain http
    assert browser.bound(secret, browser.binding_hash(secret))
    assert not browser.bound(browser.new_secret(), browser.binding_hash(secret))
    assert browser.secret_from("__Host-mcp-authorization=short", secure=True) is None


def test_derived_values_differ_per_request_and_purpose() -> None:
    secret = browser.new_secret()
    verifier = browser.login_verifier(secret, "r1")
    assert len(verifier) == 43
    assert verifier != browser.login_verifier(secret, "r2")
    assert verifier != browser.csrf_token(secret, "r1")
    assert browser.csrf_matches(secret, "r1", browser.csrf_token(secret, "r1"))
    assert not browser.csrf_matches(secret, "r2", browser.csrf_token(secret, "r1"))
    assert not browser.csrf_matches(None, "r1", browser.csrf_token(secret, "r1"))


def test_the_consent_page_escapes_what_clients_and_people_chose() -> None:
    html = pages.consent_page(
        action="https://auth.example/v1/oauth/consent",
        consent="c<1>",
        csrf='x" onclick="y',
        client_name="<script>alert(1)</script>",
        client_id="https://evil.example/c.json",
        redirect_uri="https://evil.example/cb?a=<b>",
        resource="https://memory.example/mcp",
        scopes=["memory"],
        workspaces=[Workspace("ws_1", "<b>Team</b>", "usr_1", datetime.now(UTC))],
        user_label="a&b@example.test",
    )
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert 'value="x&quot; onclick=&quot;y"' in html
    assert "&lt;b&gt;Team&lt;/b&gt;" in html and "a&amp;b@example.test" in html


def test_the_pages_allow_only_the_post_and_the_way_back() -> None:
    assert pages.headers()["Content-Security-Policy"] == (
        "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    )
    assert "form-action 'self' https://app.example:8443;" in str(
        pages.headers("https://app.example:8443/cb?x=1")["Content-Security-Policy"]
    )
    assert "form-action 'self' cursor:;" in str(
        pages.headers("cursor://x/cb")["Content-Security-Policy"]
    )
