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
        issuer="https://auth.example",
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
        "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none';"
        " base-uri 'none'"
    )
    assert "form-action 'self' https://app.example:8443;" in str(
        pages.headers("https://app.example:8443/cb?x=1")["Content-Security-Policy"]
    )
    assert "form-action 'self' cursor:;" in str(
        pages.headers("cursor://x/cb")["Content-Security-Policy"]
    )


def _consent(redirect_uri: str, client_id: str) -> str:
    return pages.consent_page(
        issuer="https://auth.example",
        action="https://auth.example/v1/oauth/consent",
        consent="c1",
        csrf="t1",
        client_name="Agent",
        client_id=client_id,
        redirect_uri=redirect_uri,
        resource="https://memory.example/mcp",
        scopes=["memory", "workspace:admin"],
        workspaces=[
            Workspace("ws_1", "One", "usr_1", datetime.now(UTC)),
            Workspace("ws_2", "Two", "usr_1", datetime.now(UTC)),
        ],
        user_label="a@example.test",
        selected="ws_2",
        document_host="app.example" if client_id.startswith("https://") else None,
    )


def test_the_consent_page_leads_with_name_host_workspace_scopes_then_allow_and_deny() -> None:
    html = _consent("https://app.example/cb", "https://app.example/c.json")

    order = [
        html.index("<h1>Allow <strong>Agent</strong>"),
        html.index("the name the application gives itself"),
        html.index('<p class="host">app.example</p>'),
        html.index('<select id="workspace_id"'),
        html.index("Read and write your memories"),
        html.index("Administer the workspace"),
        html.index('class="primary" name="decision" value="allow"'),
        html.index('class="secondary" name="decision" value="deny"'),
    ]
    assert order == sorted(order)
    assert '<option value="ws_2" selected>' in html and '<option value="ws_1">' in html
    assert '<link rel="stylesheet" href="https://auth.example/v1/oauth/pages.css">' in html
    assert '<meta name="viewport"' in html
    assert "style=" not in html and "<style" not in html and "<script" not in html
    assert 'class="warning"' not in html


def test_the_consent_page_warns_of_a_loopback_or_an_other_host_than_the_documents() -> None:
    loopback = _consent("http://127.0.0.1:5000/cb", "https://app.example/c.json")
    elsewhere = _consent("https://other.example/cb", "https://app.example/c.json")
    registered = _consent("https://other.example/cb", "cli_01REGISTERED")

    assert "a program on this computer" in loopback
    assert "Another address than the application" not in loopback
    assert "Another address than the application" in elsewhere
    assert 'class="warning"' not in registered  # no document, no host to compare with


def test_an_error_page_says_what_to_do_with_the_code_small() -> None:
    html = pages.error_page("Title <x>", "What happened.", "https://auth.example", "invalid_scope")

    assert "<h1>Title &lt;x&gt;</h1>" in html and "What you can do" in html
    assert '<p class="fineprint">Error code: <code>invalid_scope</code></p>' in html
    assert "Error code" not in pages.error_page("T", "M", "https://auth.example")


def test_a_person_without_a_workspace_is_told_why_and_where_to_create_one() -> None:
    html = pages.consent_page(
        issuer="https://auth.example",
        action="https://auth.example/v1/oauth/consent",
        consent="c1",
        csrf="t1",
        client_name="Agent",
        client_id="cli_1",
        redirect_uri="https://app.example/cb",
        resource="https://memory.example/mcp",
        scopes=["memory"],
        workspaces=[],
        user_label="a@example.test",
    )

    assert "not a member of any workspace" in html
    assert "allowed in one workspace" in html  # why: there is nothing to allow it into
    assert '<a href="https://auth.example/dashboard/#workspaces"' in html
    assert "ask the owner of one to add you" in html and "reload this page" in html
    assert 'value="allow"' not in html and 'value="deny"' in html
