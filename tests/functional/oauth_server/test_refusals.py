"""What the authorization server refuses, and how: error pages for every refusal before the
person has signed in, redirects with `error`, `state` and `iss` only after, RFC 6749 errors at
the token endpoint."""

from __future__ import annotations

from urllib.parse import urlencode

import jwt
import pytest

from tests.functional.conftest import ISSUER
from tests.functional.oauth import assert_oauth_error
from tests.functional.oauth_server.conftest import (
    CALLBACK,
    CIMD_URL,
    FORM,
    OTHER_RESOURCE,
    RESOURCE,
    Browser,
    Mcp,
    code_grant,
    pkce,
    query_of,
)


def assert_error_page(answer: object, status: int = 400) -> None:
    assert answer.status == status, answer.body  # type: ignore[attr-defined]
    headers = answer.headers  # type: ignore[attr-defined]
    assert "Location" not in headers
    assert headers["Content-Type"].startswith("text/html")
    assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
    assert b"<script" not in answer.body  # type: ignore[attr-defined]


def redirected_error(answer: object) -> dict[str, str]:
    assert answer.status == 303, answer.body  # type: ignore[attr-defined]
    location = answer.headers["Location"]  # type: ignore[attr-defined]
    assert location.startswith(CALLBACK + "?")
    query = query_of(location)
    assert query["iss"] == ISSUER and query["state"] == "state-1"
    return query


# -- authorize: what is shown, never redirected to -----------------------------------------


def test_an_unknown_client_gets_an_error_page(mcp: Mcp) -> None:
    _, challenge = pkce()
    assert_error_page(Browser(mcp).authorize("cli_01NOSUCHCLIENT0000000000000", challenge))


def test_the_client_and_its_redirect_uri_are_checked_before_the_rest_of_the_request(
    mcp: Mcp,
) -> None:
    client_id = mcp.serve_document()
    malformed = {"response_type": "token", "state": "s" * 501, "resource": None}

    unknown = Browser(mcp).authorize("cli_01NOSUCHCLIENT0000000000000", "x", **malformed)
    elsewhere = Browser(mcp).authorize(
        client_id, "x", redirect_uri="https://evil.test.example/cb", **malformed
    )

    assert_error_page(unknown)
    assert b"Unknown application" in unknown.body
    assert_error_page(elsewhere)
    assert b"Unknown return address" in elsewhere.body


def test_a_redirect_uri_not_registered_gets_an_error_page(mcp: Mcp) -> None:
    client_id = mcp.serve_document()
    _, challenge = pkce()
    for redirect_uri in ("https://evil.test.example/cb", "http://127.0.0.1:1/other", None):
        answer = Browser(mcp).authorize(client_id, challenge, redirect_uri=redirect_uri)
        assert_error_page(answer)


def test_a_loopback_redirect_may_use_another_port(mcp: Mcp) -> None:
    client_id = mcp.serve_document()
    _, challenge = pkce()
    answer = Browser(mcp).authorize(
        client_id, challenge, redirect_uri="http://127.0.0.1:50123/callback"
    )
    assert answer.status == 302
    assert answer.headers["Location"].startswith(mcp.login.issuer + "/authorize?")


def test_a_metadata_document_naming_another_client_id_is_refused(mcp: Mcp) -> None:
    mcp.serve_document(client_id="https://app.test.example/oauth/other.json")
    _, challenge = pkce()
    answer = Browser(mcp).authorize(CIMD_URL, challenge)
    assert_error_page(answer)
    assert b"another client_id" in answer.body


@pytest.mark.parametrize(
    "fields",
    [
        {"client_secret": "s3" + "cret"},
        {"token_endpoint_auth_method": "client_secret_basic"},
        {"redirect_uris": ["http://app.test.example/cb"]},  # http, not loopback
        {"redirect_uris": []},
    ],
)
def test_a_metadata_document_with_a_secret_or_bad_redirects_is_refused(
    mcp: Mcp, fields: dict[str, object]
) -> None:
    mcp.serve_document(**fields)
    _, challenge = pkce()
    assert_error_page(Browser(mcp).authorize(CIMD_URL, challenge))


ADDRESSES = [
    "https://10.0.0.1/cb",
    "https://169.254.169.254/cb",
    "https://2130706433/cb",
    "https://0x7f000001/cb",
    "https://0177.0.0.1/cb",
    "https://[::1]/cb",
    "https://[64:ff9b::a9fe:a9fe]/cb",
    "https://127.0.0.1:8443/cb",
    "myapp://10.0.0.1/cb",
]


@pytest.mark.parametrize("redirect_uri", ADDRESSES)
def test_registering_a_redirect_uri_naming_an_ip_address_is_400_invalid_redirect_uri(
    mcp: Mcp, redirect_uri: str
) -> None:
    answer = mcp.api.call("POST", "/v1/oauth/register", body={"redirect_uris": [redirect_uri]})

    assert (answer.status, answer.json["error"]) == (400, "invalid_redirect_uri")
    assert "must name a host, not an IP address" in answer.json["error_description"]


def test_a_loopback_http_redirect_may_still_name_its_address(mcp: Mcp) -> None:
    client = mcp.register(redirect_uris=["http://127.0.0.1:53682/cb", "http://[::1]/cb"])

    assert client["redirect_uris"] == ["http://127.0.0.1:53682/cb", "http://[::1]/cb"]


@pytest.mark.parametrize("redirect_uri", ADDRESSES[:3])
def test_a_metadata_document_redirecting_to_an_ip_address_is_refused(
    mcp: Mcp, redirect_uri: str
) -> None:
    mcp.serve_document(redirect_uris=[redirect_uri])
    _, challenge = pkce()

    answer = Browser(mcp).authorize(CIMD_URL, challenge, redirect_uri=redirect_uri)

    assert_error_page(answer)
    assert b"must name a host, not an IP address" in answer.body


@pytest.mark.parametrize(
    "client_id", ["https://8.8.8.8/agent.json", "https://134744072/agent.json"]
)
def test_a_client_id_url_naming_an_ip_address_is_refused_unfetched(
    mcp: Mcp, client_id: str
) -> None:
    mcp.serve_document(client_id)
    _, challenge = pkce()

    answer = Browser(mcp).authorize(client_id, challenge)

    assert_error_page(answer)
    assert b"must name a host, not an IP address" in answer.body
    assert mcp.documents.fetches == []


def test_a_metadata_document_that_cannot_be_fetched_is_refused(mcp: Mcp) -> None:
    _, challenge = pkce()
    answer = Browser(mcp).authorize("https://app.test.example/missing.json", challenge)
    assert_error_page(answer)
    assert b"could not be used" in answer.body


# -- authorize: before sign-in nothing is redirected (RFC 9700 §4.11.2) --------------------


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge": None}, "invalid_request"),
        ({"code_challenge": "too-short"}, "invalid_request"),
        ({"state": "s" * 501}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"resource": None}, "invalid_target"),
        ({"resource": "https://evil.test.example/mcp"}, "invalid_target"),
        ({"resource": RESOURCE + "/"}, "invalid_target"),
        ({"resource": "https://memory.test.example/MCP"}, "invalid_target"),  # path: exact
        ({"scope": "memory openid"}, "invalid_scope"),
    ],
)
def test_refusals_before_sign_in_are_shown_on_our_page_never_redirected(
    mcp: Mcp, overrides: dict[str, str | None], error: str
) -> None:
    client_id = mcp.serve_document()
    _, challenge = pkce()
    answer = Browser(mcp).authorize(client_id, challenge, **overrides)
    assert_error_page(answer)
    assert f"Error code: <code>{error}</code>".encode() in answer.body


def test_a_client_listing_a_phishing_page_cannot_bounce_visitors_to_it(mcp: Mcp) -> None:
    """Anyone can be a client: a link to our authorize endpoint with a bad scope must not
    send the visitor on to whatever the client lists as its redirect URI."""
    phishing = "https://phish.test.example/landing"
    client_id = mcp.serve_document(
        "https://phish.test.example/client.json", redirect_uris=[phishing]
    )
    _, challenge = pkce()
    answer = Browser(mcp).authorize(client_id, challenge, redirect_uri=phishing, scope="nope")
    assert_error_page(answer)
    assert b"phish" not in answer.body


# -- after sign-in: errors go back to the client, with `state` and `iss` -------------------


def test_a_sign_in_the_provider_refused_goes_back_with_iss_and_state(mcp: Mcp) -> None:
    client_id = mcp.serve_document()
    _, challenge = pkce()
    browser = Browser(mcp)
    at_provider = browser.authorize(client_id, challenge)
    sent = query_of(at_provider.headers["Location"])
    back = sent["redirect_uri"] + "?" + urlencode(
        {"error": "access_denied", "state": sent["state"], "iss": mcp.login.issuer}
    )

    answer = browser.get(back)

    assert redirected_error(answer)["error"] == "access_denied"


def test_a_denial_goes_back_as_access_denied_with_iss(mcp: Mcp) -> None:
    mcp.person("dave")
    client_id = mcp.serve_document()
    _, challenge = pkce()
    browser = Browser(mcp)
    _, form = browser.consent_form(browser.sign_in(browser.authorize(client_id, challenge), "dave"))
    answer = browser.decide(form, decision="deny")
    assert answer.status == 303
    query = query_of(answer.headers["Location"])
    assert query["error"] == "access_denied" and query["iss"] == ISSUER
    assert query["state"] == "state-1" and "code" not in query


# -- the browser binding and CSRF ------------------------------------------------------------


def test_the_consent_post_without_the_csrf_token_is_refused(mcp: Mcp) -> None:
    mcp.person("erin")
    client_id = mcp.serve_document()
    _, challenge = pkce()
    browser = Browser(mcp)
    _, form = browser.consent_form(browser.sign_in(browser.authorize(client_id, challenge), "erin"))

    forged = browser.decide(form, csrf="A" * 43)
    missing = browser.decide(form, csrf="")
    genuine = browser.decide(form)

    assert_error_page(forged, 403)
    assert_error_page(missing, 403)
    assert genuine.status == 303 and "code" in query_of(genuine.headers["Location"])


def test_a_consent_posted_from_another_browser_is_refused(mcp: Mcp) -> None:
    """What a cross-site form post is: the form's fields, without the person's cookie."""
    mcp.person("frank")
    client_id = mcp.serve_document()
    _, challenge = pkce()
    victim = Browser(mcp)
    _, form = victim.consent_form(victim.sign_in(victim.authorize(client_id, challenge), "frank"))
    attacker = Browser(mcp)

    answer = attacker.decide(form)

    assert_error_page(answer, 403)


def test_a_sign_in_finished_in_another_browser_is_refused(mcp: Mcp) -> None:
    """Login CSRF: the attacker starts an authorization and makes the victim finish it."""
    client_id = mcp.serve_document()
    _, challenge = pkce()
    attacker = Browser(mcp)
    at_provider = attacker.authorize(client_id, challenge)
    victim = Browser(mcp)

    answer = victim.sign_in(at_provider, "victim")

    assert_error_page(answer, 403)


def test_the_consent_page_cannot_be_framed_and_allows_only_the_post_and_the_way_back(
    mcp: Mcp,
) -> None:
    mcp.person("gina")
    client_id = mcp.serve_document()
    _, challenge = pkce()
    browser = Browser(mcp)
    page, form = browser.consent_form(
        browser.sign_in(browser.authorize(client_id, challenge), "gina")
    )
    csp = page.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
    assert "form-action 'self' http://127.0.0.1:33418" in csp
    assert page.headers["X-Frame-Options"] == "DENY"
    assert b"<script" not in page.body and b"Test Agent" in page.body
    assert b"127.0.0.1" in page.body  # the redirect host is named
    assert set(form.hidden) == {"consent", "csrf"}
    assert ("decision", "allow") in form.buttons and ("decision", "deny") in form.buttons


def test_a_consent_is_taken_once(mcp: Mcp) -> None:
    mcp.person("hank")
    client_id = mcp.serve_document()
    _, challenge = pkce()
    browser = Browser(mcp)
    _, form = browser.consent_form(browser.sign_in(browser.authorize(client_id, challenge), "hank"))
    first = browser.decide(form)
    second = browser.decide(form)
    assert first.status == 303
    assert_error_page(second)


def test_a_workspace_the_person_is_not_in_cannot_be_granted(mcp: Mcp) -> None:
    _, others = mcp.person("ivan")
    mcp.person("judy")
    client_id = mcp.serve_document()
    _, challenge = pkce()
    browser = Browser(mcp)
    _, form = browser.consent_form(browser.sign_in(browser.authorize(client_id, challenge), "judy"))
    assert others not in form.options
    assert_error_page(browser.decide(form, workspace=others), 403)


# -- the token endpoint ---------------------------------------------------------------------


def issued_code(mcp: Mcp, subject: str) -> tuple[str, str, str]:
    mcp.person(subject)
    client_id = mcp.serve_document()
    verifier, challenge = pkce()
    return client_id, Browser(mcp).code_for(client_id, challenge, subject=subject), verifier


def test_a_wrong_verifier_is_invalid_grant_and_spends_the_code(mcp: Mcp) -> None:
    client_id, code, verifier = issued_code(mcp, "kate")
    wrong = mcp.token(code_grant(client_id, code, pkce()[0]))
    right_afterwards = mcp.token(code_grant(client_id, code, verifier))
    assert_oauth_error(wrong, 400, "invalid_grant")
    assert_oauth_error(right_afterwards, 400, "invalid_grant")


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"client_id": "https://app.test.example/oauth/other.json"}, "invalid_grant"),
        ({"redirect_uri": "http://127.0.0.1:33418/other"}, "invalid_grant"),
        ({"resource": OTHER_RESOURCE}, "invalid_target"),
        ({"code_verifier": "short"}, "invalid_grant"),
    ],
)
def test_a_code_is_bound_to_its_client_redirect_and_resource(
    mcp: Mcp, overrides: dict[str, str], error: str
) -> None:
    client_id, code, verifier = issued_code(mcp, "leo")
    assert_oauth_error(mcp.token(code_grant(client_id, code, verifier, **overrides)), 400, error)


def test_a_reused_code_revokes_what_it_issued(mcp: Mcp) -> None:
    client_id, code, verifier = issued_code(mcp, "mia")
    first = mcp.token(code_grant(client_id, code, verifier))
    assert first.status == 200

    again = mcp.token(code_grant(client_id, code, verifier))
    refresh = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": first.json["refresh_token"],
         "client_id": client_id}
    )

    assert_oauth_error(again, 400, "invalid_grant")
    assert "revoked" in again.json["error_description"]
    assert_oauth_error(refresh, 400, "invalid_grant")


def test_a_code_expires_after_60_seconds(mcp: Mcp) -> None:
    client_id, code, verifier = issued_code(mcp, "ned")
    mcp.services.clock.advance(seconds=61)  # type: ignore[attr-defined]
    assert_oauth_error(mcp.token(code_grant(client_id, code, verifier)), 400, "invalid_grant")


@pytest.mark.parametrize(
    ("fields", "error", "status"),
    [
        ({"grant_type": "password", "client_id": "x"}, "unsupported_grant_type", 400),
        ({"grant_type": "authorization_code", "code": "x"}, "invalid_request", 400),
        ({"grant_type": "refresh_token", "client_id": "x"}, "invalid_request", 400),
        ({"grant_type": "refresh_token", "refresh_token": "rt_x", "client_id": "x",
          "client_secret": "s"}, "invalid_client", 401),
    ],
)
def test_malformed_token_requests(
    mcp: Mcp, fields: dict[str, str], error: str, status: int
) -> None:
    assert_oauth_error(mcp.token(fields), status, error)


def test_a_refresh_token_is_bound_to_its_client_and_resource(mcp: Mcp) -> None:
    client_id, code, verifier = issued_code(mcp, "olga")
    tokens = mcp.token(code_grant(client_id, code, verifier)).json
    refresh = {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]}

    other_client = mcp.token({**refresh, "client_id": "cli_01OTHER0000000000000000000"})
    other_resource = mcp.token({**refresh, "client_id": client_id, "resource": OTHER_RESOURCE})
    wider = mcp.token({**refresh, "client_id": client_id, "scope": "memory workspace:admin"})
    narrower = mcp.token({**refresh, "client_id": client_id, "scope": "memory"})

    assert_oauth_error(other_client, 400, "invalid_grant")
    assert_oauth_error(other_resource, 400, "invalid_target")
    assert_oauth_error(wider, 400, "invalid_scope")
    assert narrower.status == 200 and narrower.json["scope"] == "memory"


def test_an_mcp_refresh_token_is_refused_by_the_login_refresh_and_vice_versa(mcp: Mcp) -> None:
    client_id, code, verifier = issued_code(mcp, "pam")
    tokens = mcp.token(code_grant(client_id, code, verifier)).json
    login = mcp.api.call(
        "POST", "/v1/auth/exchange", body={"id_token": mcp.login.id_token("pam")}
    ).json

    at_login = mcp.api.call(
        "POST", "/v1/auth/refresh", body={"refresh_token": tokens["refresh_token"]}
    )
    at_oauth = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": login["refresh_token"],
         "client_id": client_id}
    )

    assert_oauth_error(at_login, 400, "invalid_grant")
    assert_oauth_error(at_oauth, 400, "invalid_grant")


# -- grant_types: refresh tokens only for clients that ask for them (RFC 7591 §2) -----------


@pytest.mark.parametrize("registered", [False, True])
def test_a_client_without_refresh_token_in_its_grant_types_gets_no_refresh_token(
    mcp: Mcp, registered: bool
) -> None:
    mcp.person("quinn")
    if registered:
        client_id = mcp.register(grant_types=["authorization_code"])["client_id"]
    else:
        client_id = mcp.serve_document(grant_types=None)  # RFC 7591's default: the code only
    verifier, challenge = pkce()
    code = Browser(mcp).code_for(client_id, challenge, subject="quinn")

    answer = mcp.token(code_grant(client_id, code, verifier))

    assert answer.status == 200, answer.body
    assert "access_token" in answer.json and "refresh_token" not in answer.json


def test_a_refresh_by_a_client_whose_grant_types_lack_refresh_token_is_unauthorized_client(
    mcp: Mcp,
) -> None:
    """A refresh token issued while the client's document listed refresh_token (or before
    grant_types were enforced) stops working once the client no longer lists it."""
    client_id, code, verifier = issued_code(mcp, "ruth")
    tokens = mcp.token(code_grant(client_id, code, verifier)).json
    mcp.serve_document(grant_types=["authorization_code"])

    answer = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"],
         "client_id": client_id}
    )

    assert_oauth_error(answer, 400, "unauthorized_client")


# -- what real MCP clients meet ------------------------------------------------------------


@pytest.mark.parametrize("scheme", ["Basic", "Bearer"])
def test_invalid_client_to_an_authorization_header_carries_www_authenticate(
    mcp: Mcp, scheme: str
) -> None:
    client_id, code, verifier = issued_code(mcp, "sam")
    raw = urlencode(code_grant(client_id, code, verifier)).encode()

    answer = mcp.api.call(
        "POST", "/v1/oauth/token", raw=raw,
        headers={**FORM, "Authorization": f"{scheme} " + "c2VjcmV0" "OnNlY3JldA=="},
    )

    assert_oauth_error(answer, 401, "invalid_client")
    assert answer.headers["WWW-Authenticate"] == f'{scheme} realm="{ISSUER}"'


def test_a_code_presented_again_after_a_refused_redemption_says_it_was_spent(
    mcp: Mcp,
) -> None:
    client_id, code, verifier = issued_code(mcp, "tina")
    wrong = mcp.token(code_grant(client_id, code, pkce()[0]))

    again = mcp.token(code_grant(client_id, code, verifier))

    assert_oauth_error(wrong, 400, "invalid_grant")
    assert_oauth_error(again, 400, "invalid_grant")
    assert "revoked" not in again.json["error_description"]
    assert "refused request" in again.json["error_description"]


def test_a_resource_differing_only_in_the_case_of_scheme_and_host_is_accepted(
    mcp: Mcp,
) -> None:
    mcp.person("uma")
    client_id = mcp.serve_document()
    verifier, challenge = pkce()
    shouted = "HTTPS://Memory.TEST.example/mcp"
    browser = Browser(mcp)
    at_provider = browser.authorize(client_id, challenge, resource=shouted)
    _, form = browser.consent_form(browser.sign_in(at_provider, "uma"))
    code = query_of(browser.decide(form).headers["Location"])["code"]

    answer = mcp.token(code_grant(client_id, code, verifier, resource=shouted))
    refreshed = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": answer.json["refresh_token"],
         "client_id": client_id, "resource": shouted}
    )

    assert answer.status == 200, answer.body
    claims = jwt.decode(answer.json["access_token"], options={"verify_signature": False})
    assert claims["aud"] == RESOURCE
    assert refreshed.status == 200, refreshed.body


def test_offline_access_is_accepted_and_ignored(mcp: Mcp) -> None:
    mcp.person("vera")
    client_id = mcp.serve_document()
    verifier, challenge = pkce()
    browser = Browser(mcp)
    at_provider = browser.authorize(client_id, challenge, scope="memory offline_access")
    _, form = browser.consent_form(browser.sign_in(at_provider, "vera"))
    code = query_of(browser.decide(form).headers["Location"])["code"]

    answer = mcp.token(code_grant(client_id, code, verifier))
    refreshed = mcp.token(
        {"grant_type": "refresh_token", "refresh_token": answer.json["refresh_token"],
         "client_id": client_id, "scope": "offline_access"}
    )

    assert answer.status == 200 and answer.json["scope"] == "memory"
    assert refreshed.status == 200 and refreshed.json["scope"] == "memory"


def test_the_consent_page_warns_when_the_redirect_goes_to_a_loopback_address(
    mcp: Mcp,
) -> None:
    mcp.person("walt")
    loopback = mcp.serve_document()
    website = mcp.serve_document(
        "https://web.test.example/client.json", redirect_uris=["https://web.test.example/cb"]
    )
    _, challenge = pkce()
    pages = []
    for client_id, redirect_uri in ((loopback, CALLBACK), (website, "https://web.test.example/cb")):
        browser = Browser(mcp)
        at_provider = browser.authorize(client_id, challenge, redirect_uri=redirect_uri)
        page, _ = browser.consent_form(browser.sign_in(at_provider, "walt"))
        pages.append(page.body)

    assert b"a program on this computer" in pages[0]
    assert b"a program on this computer" not in pages[1]
