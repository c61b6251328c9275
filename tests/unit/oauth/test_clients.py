"""Client rules without I/O: redirect URIs (RFC 8252 loopback ports), metadata documents."""

from __future__ import annotations

import pytest

from chalicelib.oauth.clients import (
    ClientRejected,
    InvalidClientMetadata,
    check_metadata_document,
    check_metadata_url,
    check_redirect_uri,
    matches_redirect,
)

URL = "https://app.example/oauth/client.json"


@pytest.mark.parametrize(
    ("registered", "requested", "matches"),
    [
        ("https://app.example/cb", "https://app.example/cb", True),
        ("https://app.example/cb", "https://app.example/cb/", False),
        ("https://app.example/cb", "https://APP.example/cb", False),
        ("https://app.example:443/cb", "https://app.example/cb", False),
        ("http://127.0.0.1:3000/cb", "http://127.0.0.1:51234/cb", True),
        ("http://127.0.0.1/cb", "http://127.0.0.1:51234/cb", True),
        ("http://[::1]:3000/cb", "http://[::1]:4000/cb", True),
        ("http://localhost:3000/cb", "http://localhost:4000/cb", True),
        ("http://127.0.0.1:3000/cb", "http://127.0.0.1:3000/other", False),
        ("http://127.0.0.1:3000/cb", "http://localhost:3000/cb", False),
        ("http://127.0.0.1:3000/cb?a=1", "http://127.0.0.1:9/cb?a=2", False),
        ("https://127.0.0.1:3000/cb", "https://127.0.0.1:9/cb", False),  # https: exact only
        ("cursor://app/cb", "cursor://app/cb", True),
    ],
)
def test_redirect_matching(registered: str, requested: str, matches: bool) -> None:
    assert matches_redirect(registered, requested) is matches


@pytest.mark.parametrize(
    "uri",
    [
        "https://app.example/cb",
        "http://127.0.0.1:3000/cb",
        "http://[::1]/cb",
        "com.example.app:/oauth",
        "vscode://vscode.github-authentication/did-authenticate",
    ],
)
def test_redirect_uris_a_client_may_register(uri: str) -> None:
    assert check_redirect_uri(uri) == uri


@pytest.mark.parametrize(
    "uri",
    [
        "http://app.example/cb",
        "https://app.example/cb#frag",
        "javascript:alert(1)",
        "data:text/html,x",
        "file:///etc/passwd",
        "https:///cb",
        "relative/path",
        "",
        42,
        "https://app.example/\x00",
    ],
)
def test_redirect_uris_refused(uri: object) -> None:
    with pytest.raises(InvalidClientMetadata):
        check_redirect_uri(uri)


def test_a_document_must_name_its_own_url_and_no_secret() -> None:
    good = {"client_id": URL, "redirect_uris": ["http://127.0.0.1/cb"], "client_name": "Agent"}
    client = check_metadata_document(URL, good)
    assert client.client_name == "Agent" and client.metadata_document

    for bad in (
        {**good, "client_id": URL + "?x"},
        {**good, "client_secret": "s"},
        {**good, "token_endpoint_auth_method": "private_key_jwt"},
        {**good, "redirect_uris": "http://127.0.0.1/cb"},
        [good],
    ):
        with pytest.raises(ClientRejected):
            check_metadata_document(URL, bad)


def test_a_name_that_is_not_printable_is_not_shown() -> None:
    document = {"client_id": URL, "redirect_uris": ["http://127.0.0.1/cb"],
                "client_name": "Agent\u202eevil"}
    assert check_metadata_document(URL, document).client_name is None


@pytest.mark.parametrize(
    "client_id", ["https://app.example", "https://app.example/", "https://app.example/a/../b"]
)
def test_client_id_urls_need_a_clean_path(client_id: str) -> None:
    with pytest.raises(ClientRejected):
        check_metadata_url(client_id)
