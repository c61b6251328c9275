"""The development provider's browser flow: authorization code + PKCE (local/idp.py).

The dashboard and the MCP authorization server sign people in through it locally.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Iterator
from urllib.parse import parse_qs, urlsplit

import httpx
import jwt
import pytest

from local.idp import DevIdpServer

REDIRECT = "http://127.0.0.1:9/callback"


@pytest.fixture()
def idp(monkeypatch: pytest.MonkeyPatch) -> Iterator[DevIdpServer]:
    monkeypatch.setenv("LOCAL_MODE", "1")
    server = DevIdpServer(port=0, cors_origins=("http://127.0.0.1:8000",)).start()
    try:
        yield server
    finally:
        server.stop()


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def authorize_parameters(challenge: str, **extra: str) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": "memory-auth-local",
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "st-1",
        "nonce": "n-1",
        **extra,
    }


def redirect_query(response: httpx.Response) -> dict[str, str]:
    assert response.status_code == 302
    location = response.headers["location"]
    assert location.startswith(REDIRECT + "?")
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


def redeem(idp: DevIdpServer, code: str, verifier: str) -> httpx.Response:
    return httpx.post(f"{idp.endpoint}/token", data={
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
        "client_id": "memory-auth-local", "code_verifier": verifier,
    })


def test_sign_in_form_then_code_then_id_token_for_the_client(idp: DevIdpServer) -> None:
    verifier, challenge = pkce()
    page = httpx.get(f"{idp.endpoint}/authorize", params=authorize_parameters(challenge))
    assert page.status_code == 200
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    assert '<label for="subject">' in page.text and "<script" not in page.text
    form = {
        **authorize_parameters(challenge),
        "subject": "alice", "email": "alice@example.test", "name": "Alice Liddell",
    }
    query = redirect_query(httpx.post(f"{idp.endpoint}/authorize", data=form))
    assert query["state"] == "st-1"
    assert query["iss"] == idp.endpoint
    answer = redeem(idp, query["code"], verifier)
    assert answer.status_code == 200
    assert answer.headers["cache-control"] == "no-store"
    claims = jwt.decode(answer.json()["id_token"], options={"verify_signature": False})
    assert (claims["sub"], claims["aud"], claims["nonce"]) == ("alice", "memory-auth-local", "n-1")
    assert (claims["email"], claims["email_verified"], claims["name"]) == (
        "alice@example.test", True, "Alice Liddell"
    )


def test_login_hint_signs_in_at_once(idp: DevIdpServer) -> None:
    verifier, challenge = pkce()
    params = authorize_parameters(challenge, login_hint="bob@example.test")
    query = redirect_query(httpx.get(f"{idp.endpoint}/authorize", params=params))
    claims = jwt.decode(
        redeem(idp, query["code"], verifier).json()["id_token"],
        options={"verify_signature": False},
    )
    assert (claims["sub"], claims["email"], claims["email_verified"], claims["name"]) == (
        "bob@example.test", "bob@example.test", True, "Bob"
    )


def test_a_code_works_once_and_only_with_its_verifier(idp: DevIdpServer) -> None:
    verifier, challenge = pkce()
    params = authorize_parameters(challenge, login_hint="carol")
    query = redirect_query(httpx.get(f"{idp.endpoint}/authorize", params=params))
    wrong = redeem(idp, query["code"], verifier + "x")
    assert wrong.status_code == 400
    assert wrong.json()["error"] == "invalid_grant"
    # The failed attempt consumed the code: a real provider does the same.
    assert redeem(idp, query["code"], verifier).status_code == 400


def test_plain_pkce_is_redirected_back_with_an_error(idp: DevIdpServer) -> None:
    params = authorize_parameters("x" * 43, code_challenge_method="plain", login_hint="dave")
    query = redirect_query(httpx.get(f"{idp.endpoint}/authorize", params=params))
    assert query == {"error": "invalid_request", "state": "st-1", "iss": idp.endpoint}


@pytest.mark.parametrize("redirect_uri", ["https://example.com/cb", "not a url", ""])
def test_a_foreign_redirect_uri_gets_an_error_page_never_a_redirect(
    idp: DevIdpServer, redirect_uri: str
) -> None:
    params = authorize_parameters("x" * 43, redirect_uri=redirect_uri, login_hint="eve")
    page = httpx.get(f"{idp.endpoint}/authorize", params=params)
    assert page.status_code == 400
    assert "location" not in page.headers


def test_cors_only_for_the_services_origin(idp: DevIdpServer) -> None:
    ours = httpx.get(
        f"{idp.endpoint}/.well-known/openid-configuration",
        headers={"Origin": "http://127.0.0.1:8000"},
    )
    assert ours.headers["access-control-allow-origin"] == "http://127.0.0.1:8000"
    assert ours.json()["authorization_endpoint"] == f"{idp.endpoint}/authorize"
    foreign = httpx.get(
        f"{idp.endpoint}/.well-known/openid-configuration", headers={"Origin": "https://evil.test"}
    )
    assert "access-control-allow-origin" not in foreign.headers


def test_the_form_may_be_sent_back_to_the_client_and_on_to_an_https_destination(
    idp: DevIdpServer,
) -> None:
    # Chromium holds every redirect after the form to form-action as well: the client's
    # origin, and the https client the service's callback may send a remembered consent on
    # to, must be allowed, or the browser stops on our page after "Sign in"
    # (tests/browser/test_oauth_pages.py shows the whole chain in Chromium).
    _, challenge = pkce()
    page = httpx.get(f"{idp.endpoint}/authorize", params=authorize_parameters(challenge))
    policy = page.headers["content-security-policy"]
    assert "form-action 'self' http://127.0.0.1:9 https:;" in policy
    assert "default-src 'none'" in policy


def test_discovery_promises_iss_in_every_answer_at_the_redirect_uri(idp: DevIdpServer) -> None:
    _, challenge = pkce()

    document = httpx.get(f"{idp.endpoint}/.well-known/openid-configuration").json()
    refused = redirect_query(
        httpx.get(f"{idp.endpoint}/authorize", params={
            **authorize_parameters(challenge), "response_type": "token",
        })
    )

    assert document["authorization_response_iss_parameter_supported"] is True
    assert refused["iss"] == idp.endpoint == document["issuer"]
