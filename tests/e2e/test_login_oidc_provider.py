"""Login through a real OpenID Connect provider that no one here wrote (oidc-provider, npm).

The test starts the provider on loopback and a local stack that trusts it, then does what
the dashboard does: an authorization-code login with PKCE through the provider's own login
and consent pages, the code exchanged at its token endpoint for an ID token, that ID token
exchanged with us, and whoami called with the result.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import httpx
import jwt
import pytest

from local.running import running_stack
from tests.e2e.conftest import Stack
from tests.e2e.node import node_tools

# Where the provider sends the browser back to; the dashboard's page, never fetched here.
REDIRECT_URI = "http://127.0.0.1:9/callback"


class Provider:
    def __init__(self, issuer: str, client_id: str):
        self.issuer = issuer
        self.client_id = client_id
        self.discovery = httpx.get(issuer + "/.well-known/openid-configuration", timeout=10).json()

    def trusted_issuer(self) -> dict[str, str]:
        return {
            "issuer": self.discovery["issuer"],
            "audience": self.client_id,
            "jwksUri": self.discovery["jwks_uri"],
        }


@pytest.fixture(scope="module")
def provider() -> Iterator[Provider]:
    process = subprocess.Popen(
        ["node", "provider.mjs", REDIRECT_URI],
        cwd=node_tools(), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert process.stdout is not None
        ready = json.loads(process.stdout.readline() or "null")
        assert ready, "oidc-provider did not start"
        yield Provider(ready["issuer"], ready["clientId"])
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture(scope="module")
def trusting_stack(provider: Provider) -> Iterator[Stack]:
    """A local stack whose TRUSTED_ISSUERS names the provider (next to the dev IdP)."""
    issuers = json.dumps([provider.trusted_issuer()])
    with running_stack(environment={"TRUSTED_ISSUERS": issuers}) as info:
        running = Stack(info)
        yield running
        running.http.close()


class _Form(HTMLParser):
    """The first <form> of a page: its action and its named inputs' values."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = attributes.get("action") or ""
        elif tag == "input" and attributes.get("name"):
            self.fields[str(attributes["name"])] = attributes.get("value") or ""


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Dashboard:
    """A browser-based dashboard's login: authorization code + PKCE (RFC 7636), state, nonce."""

    def __init__(self, provider: Provider):
        self.provider = provider
        self.browser = httpx.Client(timeout=10, follow_redirects=False)  # keeps cookies

    def login(self, account: str) -> dict[str, Any]:
        verifier = secrets.token_urlsafe(48)
        state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
        location = self.provider.discovery["authorization_endpoint"] + "?" + urlencode({
            "client_id": self.provider.client_id,
            "response_type": "code",
            "scope": "openid email profile",
            "redirect_uri": REDIRECT_URI,
            "state": state,
            "nonce": nonce,
            "code_challenge": _b64url(hashlib.sha256(verifier.encode()).digest()),
            "code_challenge_method": "S256",
        })
        for _ in range(12):  # authorize → login page → authorize → consent page → callback
            if location.startswith(REDIRECT_URI):
                break
            page = self.browser.get(location)
            if page.is_redirect:
                location = urljoin(location, page.headers["location"])
                continue
            assert page.status_code == 200, page.text[:500]
            form = _Form()
            form.feed(page.text)
            assert form.action is not None, page.text[:500]
            if "login" in form.fields:  # the provider's sign-in page
                form.fields.update(login=account, password="anything")
            submitted = self.browser.post(urljoin(location, form.action), data=form.fields)
            assert submitted.is_redirect, submitted.text[:500]
            location = urljoin(location, submitted.headers["location"])
        callback = parse_qs(urlsplit(location).query)
        assert callback.get("state") == [state], callback
        tokens = self.browser.post(self.provider.discovery["token_endpoint"], data={
            "grant_type": "authorization_code",
            "code": callback["code"][0],
            "redirect_uri": REDIRECT_URI,
            "client_id": self.provider.client_id,
            "code_verifier": verifier,
        })
        assert tokens.status_code == 200, tokens.text
        answer = dict(tokens.json())
        # The dashboard checks its nonce came back (the signature is ours to check).
        claims = jwt.decode(answer["id_token"], options={"verify_signature": False})
        assert claims["nonce"] == nonce
        return answer


def signed_in_user(stack: Stack, id_token: str) -> dict[str, Any]:
    """Exchange the ID token with us, then whoami with the access token: the principal."""
    exchanged = stack.call("POST", "/v1/auth/exchange", body={"id_token": id_token})
    assert exchanged.status_code == 200, exchanged.text
    whoami = stack.call("GET", "/v1/auth/whoami", exchanged.json()["access_token"])
    assert whoami.status_code == 200, whoami.text
    return dict(whoami.json())


def test_authorization_code_login_exchange_and_whoami(
    provider: Provider, trusting_stack: Stack
) -> None:
    grace = signed_in_user(trusting_stack, Dashboard(provider).login("grace")["id_token"])
    assert grace["userId"].startswith("usr_")
    assert grace["credential"] == "user_token"


def test_same_provider_account_is_the_same_user_and_another_is_not(
    provider: Provider, trusting_stack: Stack
) -> None:
    first = signed_in_user(trusting_stack, Dashboard(provider).login("judy")["id_token"])
    again = signed_in_user(trusting_stack, Dashboard(provider).login("judy")["id_token"])
    other = signed_in_user(trusting_stack, Dashboard(provider).login("heidi")["id_token"])
    assert again["userId"] == first["userId"]
    assert other["userId"] != first["userId"]


def test_provider_id_token_with_a_broken_signature_is_invalid_grant(
    provider: Provider, trusting_stack: Stack
) -> None:
    id_token = Dashboard(provider).login("ivan")["id_token"]
    broken = id_token.rsplit(".", 1)[0] + "." + _b64url(b"\0" * 256)
    answer = trusting_stack.call("POST", "/v1/auth/exchange", body={"id_token": broken})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_grant"
