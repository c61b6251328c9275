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


@pytest.mark.parametrize("name", [None, "", "  ", 42])
def test_a_document_without_a_client_name_is_refused_naming_the_field(name: object) -> None:
    document = {"client_id": URL, "redirect_uris": ["http://127.0.0.1/cb"], "client_name": name}
    if name is None:
        del document["client_name"]

    with pytest.raises(ClientRejected) as refused:
        check_metadata_document(URL, document)

    assert "client_name" in refused.value.description


def test_a_name_that_is_not_printable_is_not_shown() -> None:
    document = {"client_id": URL, "redirect_uris": ["http://127.0.0.1/cb"],
                "client_name": "Agent\u202eevil"}
    assert check_metadata_document(URL, document).client_name is None


@pytest.mark.parametrize(
    "name",
    [
        "Hal \U0001f469\u200d\U0001f4bb",
        "\u067e\u0631\u06cc\u0633\u0627 \u0646\u06cc\u06a9\u200c\u0646\u0627\u0645",
    ],
)
def test_a_client_name_with_joiners_is_accepted_as_labels_are(name: str) -> None:
    document = {"client_id": URL, "redirect_uris": ["http://127.0.0.1/cb"], "client_name": name}
    assert check_metadata_document(URL, document).client_name == name


@pytest.mark.parametrize(
    "client_id", ["https://app.example", "https://app.example/", "https://app.example/a/../b"]
)
def test_client_id_urls_need_a_clean_path(client_id: str) -> None:
    with pytest.raises(ClientRejected):
        check_metadata_url(client_id)


@pytest.mark.parametrize(
    ("grant_types", "may_refresh"),
    [
        (None, False),  # RFC 7591 §2: authorization_code when a client names none
        (["authorization_code"], False),
        (["authorization_code", "refresh_token"], True),
    ],
)
def test_a_metadata_document_client_may_refresh_only_if_its_grant_types_say_so(
    grant_types: list[str] | None, may_refresh: bool
) -> None:
    document: dict[str, object] = {
        "client_id": URL,
        "redirect_uris": ["https://app.example/cb"],
        "client_name": "Agent",
    }
    if grant_types is not None:
        document["grant_types"] = grant_types
    assert check_metadata_document(URL, document).may_refresh is may_refresh


def test_a_metadata_document_whose_grant_types_is_not_a_list_of_names_is_refused() -> None:
    document = {"client_id": URL, "redirect_uris": ["https://app.example/cb"], "grant_types": "x"}
    with pytest.raises(ClientRejected):
        check_metadata_document(URL, document)
