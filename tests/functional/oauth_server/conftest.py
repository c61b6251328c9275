"""The MCP authorization server through `chalice.test.Client`, on moto, with a browser.

The login provider is `local/idp.py`'s provider in memory (no HTTP): the browser follows our
redirect to it by asking it for a code directly, as its `login_hint` sign-in would, and the
service redeems that code through a transport that calls the same provider. Client ID
Metadata Documents are served from a dict (the SSRF-safe fetcher has its own tests).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable, Iterator
from copy import replace
from dataclasses import dataclass
from html.parser import HTMLParser
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from chalice.test import Client

from chalicelib import runtime
from chalicelib.config import LoginProvider, parse_mcp_resources
from chalicelib.fetch import FetchRefused
from chalicelib.oauth.clients import ClientStore
from chalicelib.runtime import Services
from local.idp import DevIdentityProvider
from tests.functional.conftest import ISSUER, Answer, Api, another_container
from tests.functional.oauth import trust
from tests.oidc_issuer import FakeIssuer

RESOURCE = "https://memory.test.example/mcp"
OTHER_RESOURCE = "https://other.test.example/tools"
CIMD_URL = "https://app.test.example/oauth/client.json"
CALLBACK = "http://127.0.0.1:33418/callback"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


class ProviderInMemory:
    """The login provider's endpoints, without HTTP."""

    def __init__(self, provider: DevIdentityProvider):
        self.provider = provider
        self.redeemed: list[dict[str, str]] = []

    def get_json(self, url: str) -> Any:
        assert url == self.provider.issuer + "/.well-known/openid-configuration"
        return self.provider.discovery()

    def post_form(self, url: str, form: dict[str, str]) -> tuple[int, Any]:
        assert url == self.provider.issuer + "/token"
        self.redeemed.append(form)
        answer = self.provider.redeem(form)
        return (200, answer) if answer is not None else (400, {"error": "invalid_grant"})


class Documents:
    """Client ID Metadata Documents by URL; anything else cannot be fetched."""

    def __init__(self) -> None:
        self.served: dict[str, Any] = {}
        self.fetches: list[str] = []

    def fetch_json(self, url: str) -> Any:
        self.fetches.append(url)
        if url not in self.served:
            raise FetchRefused("it answered HTTP 404, not 200")
        return self.served[url]

    def forget(self, url: str) -> None:
        pass


@dataclass
class Mcp:
    api: Api
    services: Services
    login: FakeIssuer
    provider: ProviderInMemory
    documents: Documents

    def serve_document(self, url: str = CIMD_URL, **fields: Any) -> str:
        document = {
            "client_id": url,
            "client_name": "Test Agent",
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
        }
        document.update(fields)
        self.documents.served[url] = {k: v for k, v in document.items() if v is not None}
        return url

    def register(self, **fields: Any) -> dict[str, Any]:
        body = {
            "redirect_uris": [CALLBACK],
            "client_name": "Registered Agent",
            "grant_types": ["authorization_code", "refresh_token"],
            **fields,
        }
        answer = self.api.call("POST", "/v1/oauth/register", body=body)
        assert answer.status == 201, answer.body
        return dict(answer.json)

    def person(self, subject: str = "alice", workspace: str = "Team") -> tuple[str, str]:
        """Signs `subject` in once (the exchange), with a workspace: (user token, its id)."""
        answer = self.api.call(
            "POST", "/v1/auth/exchange", body={"id_token": self.login.id_token(subject)}
        )
        assert answer.status == 200, answer.body
        token = str(answer.json["access_token"])
        return token, self.api.workspace(token, workspace)

    def token(self, fields: dict[str, str]) -> Answer:
        raw = urlencode(fields).encode()
        return self.api.call("POST", "/v1/oauth/token", raw=raw, headers=FORM)


Invoke = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture
def authorize(mcp: Mcp) -> Iterator[Invoke]:
    """The data-plane authorizer, invoked as Lambda would, in a container of its own."""
    from app import app

    own = another_container(mcp.services)

    def invoke(event: dict[str, Any]) -> dict[str, Any]:
        runtime.use(own)
        try:
            return dict(client.lambda_.invoke("authorizer", event).payload)
        finally:
            runtime.use(mcp.services)

    with Client(app) as client:
        yield invoke


@pytest.fixture
def mcp(api: Api, services: Services) -> Iterator[Mcp]:
    login = FakeIssuer(issuer="https://login.test.example", audience="memory-auth-test")
    trust(services, login)
    settings = replace(
        services.settings,
        mcp_resources=parse_mcp_resources(f'["{RESOURCE}", "{OTHER_RESOURCE}"]', False),
        login_provider=LoginProvider(login.issuer, login.audience),
    )
    vars(services)["settings"] = settings  # before anything reads it (cached_property slot)
    provider = ProviderInMemory(login.provider)
    services.login_provider_transport = provider  # type: ignore[misc]
    documents = Documents()
    services.oauth_clients = ClientStore(  # type: ignore[misc]
        services.dynamodb, settings.table_name, documents
    )
    yield Mcp(api, services, login, provider, documents)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def query_of(location: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(location).query).items()}


class FormReader(HTMLParser):
    """The consent form's fields, as a browser would submit them."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.hidden: dict[str, str] = {}
        self.options: list[str] = []
        self.buttons: list[tuple[str, str]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.action = found.get("action")
        elif tag == "input" and found.get("type") == "hidden":
            self.hidden[found["name"]] = found["value"]
        elif tag == "option":
            self.options.append(found["value"])
        elif tag == "button":
            self.buttons.append((found.get("name", ""), found.get("value", "")))


class Browser:
    """A person's browser on the chalice test client: keeps our cookie, follows by hand."""

    def __init__(self, mcp: Mcp):
        self.mcp = mcp
        self.cookies: dict[str, str] = {}

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        headers = dict(extra or {})
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        return headers

    def _keep(self, answer: Answer) -> Answer:
        set_cookie = answer.headers.get("Set-Cookie")
        if set_cookie:
            jar: SimpleCookie = SimpleCookie()
            jar.load(set_cookie)
            self.cookies.update({name: morsel.value for name, morsel in jar.items()})
        return answer

    def get(self, url: str) -> Answer:
        path = url.removeprefix(ISSUER)
        return self._keep(self.mcp.api.call("GET", path, headers=self._headers()))

    def post(self, url: str, fields: dict[str, str]) -> Answer:
        path = url.removeprefix(ISSUER)
        return self._keep(
            self.mcp.api.call(
                "POST", path, raw=urlencode(fields).encode(), headers=self._headers(FORM)
            )
        )

    # -- the steps -------------------------------------------------------------------------

    def authorize(self, client_id: str, challenge: str, **overrides: str | None) -> Answer:
        parameters: dict[str, str | None] = {
            "response_type": "code",
            "client_id": client_id,
            "redirect_uri": CALLBACK,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "state": "state-1",
            "resource": RESOURCE,
            **overrides,
        }
        present = {k: v for k, v in parameters.items() if v is not None}
        return self.get("/v1/oauth/authorize?" + urlencode(present))

    def sign_in(self, at_provider: Answer, subject: str = "alice") -> Answer:
        """At the provider (the location we were sent to), sign in; back to our callback."""
        assert at_provider.status == 302, at_provider.body
        location = at_provider.headers["Location"]
        assert location.startswith(self.mcp.login.issuer + "/authorize?")
        parameters = query_of(location)
        code = self.mcp.provider.provider.issue_code(
            parameters, subject, f"{subject}@example.test"
        )
        back = parameters["redirect_uri"] + "?" + urlencode(
            {"code": code, "state": parameters["state"], "iss": self.mcp.login.issuer}
        )
        return self.get(back)

    def consent_form(self, callback_answer: Answer) -> tuple[Answer, FormReader]:
        assert callback_answer.status == 303, callback_answer.body
        page = self.get(callback_answer.headers["Location"])
        assert page.status == 200, page.body
        reader = FormReader()
        reader.feed(page.body.decode())
        return page, reader

    def decide(
        self, reader: FormReader, decision: str = "allow", workspace: str | None = None,
        **overrides: str,
    ) -> Answer:
        fields = {**reader.hidden, "decision": decision}
        if reader.options:
            fields["workspace_id"] = workspace or reader.options[0]
        fields.update(overrides)
        assert reader.action is not None
        return self.post(reader.action, fields)

    def code_for(
        self, client_id: str, challenge: str, subject: str = "alice", workspace: str | None = None
    ) -> str:
        """The whole browser part: authorize, sign in, allow; the code the client gets.
        (`prompt=consent`: the page is shown even where a consent is remembered.)"""
        asked = self.authorize(client_id, challenge, prompt="consent")
        form = self.consent_form(self.sign_in(asked, subject))[1]
        answer = self.decide(form, workspace=workspace)
        assert answer.status == 303, answer.body
        query = query_of(answer.headers["Location"])
        assert query["state"] == "state-1" and query["iss"] == ISSUER
        return query["code"]


def code_grant(client: str, code: str, verifier: str, **overrides: str) -> dict[str, str]:
    fields = {
        "grant_type": "authorization_code",
        "code": code,
        "redirect_uri": CALLBACK,
        "client_id": client,
        "code_verifier": verifier,
        "resource": RESOURCE,
        **overrides,
    }
    return {k: v for k, v in fields.items() if v != ""}
