"""An independent MCP client (the `mcp` SDK's OAuthClientProvider) against the local stack.

It connects to the development MCP server with no token, discovers this service from the
401's `resource_metadata`, registers (a Client ID Metadata Document the test serves on
loopback, or Dynamic Client Registration), and goes through the authorization code flow
with PKCE: the test is its browser, following the redirects, submitting the development
provider's sign-in form and our consent form as a person would. Then it calls tools, lets
its access token expire, refreshes and calls again. The refusals over real HTTP follow.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.e2e.conftest import Stack

# Where the client wants the browser sent back. Nothing listens there: the browser (this
# test) reads the redirect's Location instead of loading it, as a native app's loopback
# listener would read the request.
CALLBACK = "http://127.0.0.1:47213/callback"


class Storage:
    """The SDK's TokenStorage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class FormReader(HTMLParser):
    """A page's form as a browser submits it: hidden and filled-in inputs, the first option
    of each select, and the chosen button."""

    def __init__(self) -> None:
        super().__init__()
        self.action: str | None = None
        self.fields: dict[str, str] = {}
        self.buttons: list[tuple[str, str]] = []
        self._select: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {name: value or "" for name, value in attrs}
        if tag == "form":
            self.action = found.get("action")
        elif tag == "input" and "name" in found:
            self.fields[found["name"]] = found.get("value", "")
        elif tag == "select":
            self._select = found.get("name")
        elif tag == "option" and self._select and self._select not in self.fields:
            self.fields[self._select] = found.get("value", "")
        elif tag == "button" and found.get("name"):
            self.buttons.append((found["name"], found.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


def read_form(page: httpx.Response) -> FormReader:
    assert page.status_code == 200, page.text
    assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
    reader = FormReader()
    reader.feed(page.text)
    assert reader.action is not None
    return reader


class Person:
    """A person at a browser: signs in at the development provider as `subject`, allows."""

    def __init__(self, subject: str):
        self.subject = subject
        self.http = httpx.AsyncClient(timeout=30)  # keeps cookies, never follows by itself
        self.returned_to: str | None = None
        self.seen: list[str] = []  # every redirect location, to check `iss` on ours

    async def open(self, url: str) -> None:
        """The SDK's redirect handler: the browser opens the authorization URL."""
        response = await self.http.get(url)
        while True:
            if response.status_code in (302, 303):
                location = urljoin(str(response.url), response.headers["location"])
                self.seen.append(location)
                if location.startswith(CALLBACK):
                    self.returned_to = location
                    return
                response = await self.http.get(location)
                continue
            form = read_form(response)
            fields = dict(form.fields)
            if "subject" in fields:  # the development provider's sign-in page
                fields.update(subject=self.subject, email=f"{self.subject}@example.test")
            else:  # our consent page
                assert ("decision", "allow") in form.buttons
                fields["decision"] = "allow"
            action = urljoin(str(response.url), form.action or "")
            response = await self.http.post(action, data=fields)

    async def come_back(self) -> AuthorizationCodeResult:
        """The SDK's callback handler: what arrived at the redirect URI."""
        assert self.returned_to is not None
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.returned_to).query).items()}
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )


def provider_for(stack: Stack, person: Person, storage: Storage) -> OAuthClientProvider:
    return OAuthClientProvider(
        server_url=stack.info["mcpResource"],
        client_metadata=OAuthClientMetadata(
            client_name="memory-auth e2e agent",
            redirect_uris=[CALLBACK],  # type: ignore[list-item]
            grant_types=["authorization_code", "refresh_token"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=person.open,
        callback_handler=person.come_back,
    )


class MetadataDocuments:
    """Client ID Metadata Documents served on loopback (our server fetches them in local
    mode only; anywhere else it would insist on https and a public address)."""

    def __init__(self) -> None:
        self.documents: dict[str, dict[str, Any]] = {}
        documents = self.documents

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                document = documents.get(self.path)
                body = json.dumps(document).encode()
                self.send_response(200 if document is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def serve(self, path: str, **overrides: Any) -> str:
        url = self.base + path
        self.documents[path] = {
            "client_id": url,
            "client_name": "memory-auth e2e agent (metadata document)",
            "redirect_uris": [CALLBACK],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "none",
            **overrides,
        }
        return url

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def documents() -> Iterator[MetadataDocuments]:
    served = MetadataDocuments()
    try:
        yield served
    finally:
        served.close()


def person_with_workspace(stack: Stack, subject: str) -> tuple[str, str]:
    """A person who signed in before (the exchange) and owns a workspace: (token, id)."""
    id_token = httpx.post(
        stack.info["idpEndpoint"] + "/token", json={"sub": subject}, timeout=10
    ).json()["id_token"]
    token = stack.call("POST", "/v1/auth/exchange", body={"id_token": id_token}).json()[
        "access_token"
    ]
    workspace = stack.call("POST", "/v1/workspaces", token, body={"name": f"{subject}'s"})
    assert workspace.status_code == 201, workspace.text
    return token, str(workspace.json()["id"])


async def use_tools(stack: Stack, provider: OAuthClientProvider, storage: Storage) -> list[Any]:
    """Connect, call both tools, let the access token expire, call again; what came back."""
    results: list[Any] = []
    async with (
        httpx2.AsyncClient(auth=provider, timeout=30) as http,
        Client(streamable_http_client(stack.info["mcpResource"], http_client=http)) as client,
    ):
        results.append(await client.call_tool("echo", {"text": "hello"}))
        results.append(await client.call_tool("whoami", {}))
        first = storage.tokens
        # The hour is up: the SDK must refresh before its next request.
        provider.context.token_expiry_time = time.time() - 1
        results.append(await client.call_tool("whoami", {}))
        assert storage.tokens is not None and first is not None
        assert storage.tokens.refresh_token != first.refresh_token
        assert storage.tokens.access_token != first.access_token
    return results


def structured(result: Any) -> Any:
    assert not result.is_error, result
    if result.structured_content is not None:
        return result.structured_content.get("result", result.structured_content)
    return json.loads(result.content[0].text)


def test_an_mcp_client_registered_by_metadata_document_signs_in_calls_and_refreshes(
    stack: Stack, documents: MetadataDocuments
) -> None:
    _, workspace = person_with_workspace(stack, "mcp-alice")
    person, storage = Person("mcp-alice"), Storage()
    provider = provider_for(stack, person, storage)
    client_id = documents.serve("/agents/alice.json")
    # The SDK accepts only an https client_id URL; the test serves the document on plain
    # loopback http, which our server accepts only in local mode.
    provider.context.client_metadata_url = client_id

    results = anyio.run(use_tools, stack, provider, storage)

    assert structured(results[0]) == "hello"
    who = structured(results[1])
    assert who["workspaceId"] == workspace and who["clientId"] == client_id
    assert who["credential"] == "mcp_token"
    # What the 401's scope hint names, and the SDK asks for: the resource's scopes.
    assert who["scopes"] == "memory entities reasoning ontology skills"
    assert structured(results[2]) == who
    assert storage.client is not None and storage.client.client_id == client_id
    ours = [u for u in person.seen if u.startswith((CALLBACK, stack.endpoint))]
    assert ours and all("iss=" in u for u in ours if u.startswith(CALLBACK))


def test_an_mcp_client_registered_dynamically_signs_in_calls_and_refreshes(
    stack: Stack,
) -> None:
    _, workspace = person_with_workspace(stack, "mcp-bob")
    person, storage = Person("mcp-bob"), Storage()
    provider = provider_for(stack, person, storage)

    results = anyio.run(use_tools, stack, provider, storage)

    assert structured(results[0]) == "hello"
    assert structured(results[1])["workspaceId"] == workspace
    assert storage.client is not None and storage.client.client_id.startswith("cli_")
    assert structured(results[2])["clientId"] == storage.client.client_id


# -- refusals over real HTTP -----------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp_tokens(stack: Stack) -> dict[str, Any]:
    """One dynamically registered client's tokens (its storage), for the refusals below."""
    _, workspace = person_with_workspace(stack, "mcp-carol")
    person, storage = Person("mcp-carol"), Storage()

    async def connect() -> None:
        provider = provider_for(stack, person, storage)
        async with (
            httpx2.AsyncClient(auth=provider, timeout=30) as http,
            Client(streamable_http_client(stack.info["mcpResource"], http_client=http)) as client,
        ):
            await client.call_tool("echo", {"text": "x"})

    anyio.run(connect)
    assert storage.tokens is not None and storage.client is not None
    return {"tokens": storage.tokens, "client": storage.client, "workspace": workspace}


def gate(stack: Stack, path: str, credential: str, workspace: str | None = None) -> httpx.Response:
    base = stack.info["mcpResource"].removesuffix("/mcp")
    headers = {"Authorization": f"Bearer {credential}"}
    if workspace:
        headers["X-Workspace-Id"] = workspace
    if path == "/mcp":
        headers.update({"Content-Type": "application/json", "Accept": "application/json"})
        return httpx.post(base + path, headers=headers, json={}, timeout=10)
    return httpx.get(base + path, headers=headers, timeout=10)


def test_an_mcp_token_is_refused_by_the_services_routes_and_other_data_plane_paths(
    stack: Stack, mcp_tokens: dict[str, Any]
) -> None:
    token = mcp_tokens["tokens"].access_token
    whoami = stack.call("GET", "/v1/auth/whoami", token)
    data_plane = gate(stack, "/v1/memory/items", token, mcp_tokens["workspace"])
    assert whoami.status_code == 401 and whoami.json()["code"] == "invalid_credentials"
    assert data_plane.status_code == 401


def test_a_user_token_is_refused_at_the_mcp_resource_with_resource_metadata(
    stack: Stack,
) -> None:
    token, workspace = person_with_workspace(stack, "mcp-dave")
    at_mcp = gate(stack, "/mcp", token, workspace)
    elsewhere = gate(stack, "/v1/memory/items", token, workspace)
    assert at_mcp.status_code == 401
    assert at_mcp.headers["www-authenticate"] == (
        'Bearer error="invalid_token", scope="memory entities reasoning ontology skills",'
        ' resource_metadata="'
        f'{stack.info["mcpResource"].removesuffix("/mcp")}'
        '/.well-known/oauth-protected-resource/mcp"'
    )
    assert elsewhere.status_code == 200  # the same user token where it belongs


def test_an_mcp_token_for_another_workspace_is_workspace_mismatch(
    stack: Stack, mcp_tokens: dict[str, Any]
) -> None:
    answer = gate(stack, "/mcp", mcp_tokens["tokens"].access_token, "ws_01OTHER000000000000000000")
    assert answer.status_code == 403 and answer.json()["code"] == "workspace_mismatch"
    assert 'resource_metadata="' in answer.headers["www-authenticate"]


def test_a_reused_refresh_token_revokes_the_grant_and_its_access_token(
    stack: Stack, mcp_tokens: dict[str, Any]
) -> None:
    tokens, client = mcp_tokens["tokens"], mcp_tokens["client"]
    refresh = {"grant_type": "refresh_token", "client_id": client.client_id}
    first = stack.http.post(
        "/v1/oauth/token", data={**refresh, "refresh_token": tokens.refresh_token}
    )
    assert first.status_code == 200, first.text
    # Its successor used, the spent token presented again is reuse (at once, unused, it
    # would be a retry answered with the same successor).
    onward = stack.http.post(
        "/v1/oauth/token", data={**refresh, "refresh_token": first.json()["refresh_token"]}
    )
    assert onward.status_code == 200, onward.text
    reused = stack.http.post(
        "/v1/oauth/token", data={**refresh, "refresh_token": tokens.refresh_token}
    )
    after = gate(stack, "/mcp", first.json()["access_token"])
    assert reused.status_code == 400 and reused.json()["error"] == "invalid_grant"
    assert after.status_code == 401  # the family is revoked: its access tokens too


def authorize_url(stack: Stack, client_id: str, **overrides: str) -> str:
    parameters = {
        "response_type": "code", "client_id": client_id, "redirect_uri": CALLBACK,
        "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        "code_challenge_method": "S256", "state": "s-1", "resource": stack.info["mcpResource"],
        **overrides,
    }
    return stack.endpoint + "/v1/oauth/authorize?" + urlencode(parameters)


@pytest.mark.parametrize(
    ("path", "overrides", "shown"),
    [
        ("/agents/liar.json", {"client_id": "https://elsewhere.example/agent.json"},
         b"another client_id"),
        ("/agents/private.json", None, b"must name a host, not an IP address"),
    ],
)
def test_metadata_documents_that_lie_or_point_inward_get_an_error_page(
    stack: Stack, documents: MetadataDocuments, path: str, overrides: dict[str, str] | None,
    shown: bytes,
) -> None:
    if overrides is None:
        # A client_id on an address: refused as written, before any lookup or connection.
        client_id = "https://10.1.2.3/agents/private.json"
    else:
        client_id = documents.serve(path, **overrides)
    answer = httpx.get(authorize_url(stack, client_id), timeout=10)
    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert shown in answer.content


def test_refusals_before_sign_in_are_our_error_page_not_a_redirect(
    stack: Stack, documents: MetadataDocuments
) -> None:
    client_id = documents.serve("/agents/plain.json")
    plain = httpx.get(authorize_url(stack, client_id, code_challenge_method="plain"), timeout=10)
    foreign = httpx.get(
        authorize_url(stack, client_id, resource="https://other.example/mcp"), timeout=10
    )
    for answer, error in ((plain, "invalid_request"), (foreign, "invalid_target")):
        assert answer.status_code == 400
        assert "location" not in answer.headers
        assert answer.headers["content-type"].startswith("text/html")
        assert f"Error code: <code>{error}</code>" in answer.text


def test_the_authorization_endpoint_is_not_an_open_redirector(
    stack: Stack, documents: MetadataDocuments
) -> None:
    """RFC 9700 §4.11.2: anyone can be a client; a link on our origin with a bad scope must
    not bounce the visitor to the page the "client" lists as its redirect URI."""
    phishing = "https://phish.example/landing"
    client_id = documents.serve("/agents/phish.json", redirect_uris=[phishing])

    answer = httpx.get(
        authorize_url(stack, client_id, redirect_uri=phishing, scope="nope"), timeout=10
    )

    assert answer.status_code == 400
    assert "location" not in answer.headers
    assert "phish.example" not in answer.text
