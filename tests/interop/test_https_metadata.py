"""A Client ID Metadata Document served over https on loopback, with a certificate of a test
authority: trusted through `SSL_CERT_FILE` (docs/guides/mcp-clients.md, "Locally"), and
refused on our error page, saying why, by a stack that does not trust that authority."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from local.running import running_stack
from tests.fixtures.tls import https_documents
from tests.interop.conftest import Stack

CALLBACK = "http://127.0.0.1:47998/callback"


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """(the document's https URL, the test authority's certificate)."""
    documents: dict[str, Any] = {}
    folder = tmp_path_factory.mktemp("tls")
    with https_documents(folder, documents) as (base, ca_file):
        url = base + "/agents/https.json"
        documents["/agents/https.json"] = {
            "client_id": url,
            "client_name": "An agent served over https",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        }
        yield url, ca_file


def authorize(endpoint: str, resource: str, client_id: str) -> httpx.Response:
    challenge = base64.urlsafe_b64encode(hashlib.sha256(b"v" * 43).digest()).rstrip(b"=")
    parameters = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": CALLBACK,
        "code_challenge": challenge.decode(),
        "code_challenge_method": "S256",
        "state": "s",
        "resource": resource,
    }
    return httpx.get(endpoint + "/v1/oauth/authorize", params=parameters, timeout=30)


def test_ssl_cert_file_lets_the_stack_fetch_an_https_document_on_loopback(
    document: tuple[str, Path],
) -> None:
    url, ca_file = document
    with running_stack(environment={"SSL_CERT_FILE": str(ca_file)}) as info:
        answer = authorize(info["endpoint"], info["mcpResource"], url)

    assert answer.status_code == 302, answer.text  # on to the sign-in: the document was used
    assert answer.headers["location"].startswith(info["idpEndpoint"])


def test_without_it_the_error_page_says_the_certificate_did_not_verify(
    stack: Stack, document: tuple[str, Path]
) -> None:
    url, _ = document

    answer = authorize(stack.endpoint, stack.info["mcpResource"], url)

    assert answer.status_code == 400
    assert "its TLS certificate could not be verified" in answer.text
