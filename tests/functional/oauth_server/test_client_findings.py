"""What real MCP clients found: a metadata document must name its application, and the
token and revocation endpoints answer any body but a form in RFC 6749's error shape."""

from __future__ import annotations

import json
from copy import replace

import pytest

from tests.functional.oauth import assert_oauth_error
from tests.functional.oauth_server.conftest import CALLBACK, CIMD_URL, Browser, Mcp, pkce
from tests.functional.oauth_server.test_refusals import assert_error_page


@pytest.mark.parametrize("client_name", [None, "", "   "])
def test_a_metadata_document_without_client_name_gets_an_error_page_naming_it_400(
    mcp: Mcp, client_name: str | None
) -> None:
    mcp.serve_document(client_name=client_name)
    _, challenge = pkce()

    answer = Browser(mcp).authorize(CIMD_URL, challenge)

    assert_error_page(answer)
    assert b"no client_name, which is required" in answer.body
    assert b"unnamed application" not in answer.body


@pytest.mark.parametrize("path", ["/v1/oauth/token", "/v1/oauth/revoke"])
@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("application/json", json.dumps({"grant_type": "refresh_token"}).encode()),
        ("text/plain", b"grant_type=refresh_token"),
        ("multipart/form-data; boundary=x", b"--x--"),
    ],
)
def test_a_body_that_is_not_a_form_is_an_oauth_invalid_request_400(
    mcp: Mcp, path: str, content_type: str, raw: bytes
) -> None:
    answer = mcp.api.call("POST", path, raw=raw, headers={"Content-Type": content_type})

    assert_oauth_error(answer, 400, "invalid_request")
    assert answer.headers["Content-Type"] == "application/json"
    assert "application/x-www-form-urlencoded" in answer.json["error_description"]


def test_refused_registrations_do_not_count_towards_the_limit_201_then_429(mcp: Mcp) -> None:
    settings = replace(mcp.services.settings, registration_limit=2)
    vars(mcp.services)["settings"] = settings  # before the limit is built (cached_property)
    register = "/v1/oauth/register"

    refused = [
        mcp.api.call("POST", register, body={"redirect_uris": ["http://evil.test.example/cb"]}),
        mcp.api.call("POST", register, body={"redirect_uris": []}),
        mcp.api.call("POST", register, raw=b"not json"),
    ]
    admitted = [
        mcp.api.call("POST", register, body={"redirect_uris": [CALLBACK]}) for _ in range(3)
    ]

    assert [a.status for a in refused] == [400, 400, 400]
    assert [a.status for a in admitted] == [201, 201, 429]
