"""The login provider's answer at our callback must name it in `iss` (RFC 9207) when its
discovery document says it always does; another issuer is refused either way. A refused
answer redeems nothing, and the genuine answer can still finish the sign-in."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from tests.functional.oauth_server.conftest import Browser, Mcp, pkce, query_of
from tests.functional.oauth_server.test_refusals import assert_error_page

OTHER_ISSUER = "https://evil.test.example"


def provider_says(mcp: Mcp, monkeypatch: pytest.MonkeyPatch, sends_iss: bool | None) -> None:
    """The provider's discovery document, with or without the RFC 9207 promise."""
    document = mcp.provider.provider.discovery()
    if sends_iss is None:
        document.pop("authorization_response_iss_parameter_supported", None)
    else:
        document["authorization_response_iss_parameter_supported"] = sends_iss
    monkeypatch.setattr(mcp.provider.provider, "discovery", lambda: dict(document))


def answer(mcp: Mcp, location: str, iss: str | None) -> str:
    """The callback URL with a code for the person at the provider, its state and `iss`."""
    parameters = query_of(location)
    code = mcp.provider.provider.issue_code(parameters, "alice", "alice@example.test")
    fields = {"code": code, "state": parameters["state"], "iss": iss}
    back = parameters["redirect_uri"] + "?" + urlencode(
        {name: value for name, value in fields.items() if value is not None}
    )
    return back


@pytest.mark.parametrize("iss", [None, OTHER_ISSUER, ""])
def test_a_provider_that_promises_iss_is_refused_an_answer_without_its_own(
    mcp: Mcp, monkeypatch: pytest.MonkeyPatch, iss: str | None
) -> None:
    provider_says(mcp, monkeypatch, sends_iss=True)
    browser = Browser(mcp)
    _, challenge = pkce()
    at_provider = browser.authorize(mcp.serve_document(), challenge)
    forged = answer(mcp, at_provider.headers["Location"], iss)

    refused = browser.get(forged)

    assert_error_page(refused)
    assert b"login provider (iss)" in refused.body
    assert mcp.provider.redeemed == []  # the code was never sent to the token endpoint
    genuine = answer(mcp, at_provider.headers["Location"], mcp.login.issuer)
    assert browser.get(genuine).status == 303  # on to the consent page


@pytest.mark.parametrize("promise", [None, False])
def test_a_provider_that_does_not_promise_iss_may_answer_without_it(
    mcp: Mcp, monkeypatch: pytest.MonkeyPatch, promise: bool | None
) -> None:
    provider_says(mcp, monkeypatch, sends_iss=promise)
    browser = Browser(mcp)
    _, challenge = pkce()
    at_provider = browser.authorize(mcp.serve_document(), challenge)
    without_iss = answer(mcp, at_provider.headers["Location"], None)

    accepted = browser.get(without_iss)

    assert accepted.status == 303, accepted.body
    assert "/v1/oauth/consent?" in accepted.headers["Location"]
    assert len(mcp.provider.redeemed) == 1


def test_a_provider_that_does_not_promise_iss_is_still_refused_another_issuer(
    mcp: Mcp, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider_says(mcp, monkeypatch, sends_iss=None)
    browser = Browser(mcp)
    _, challenge = pkce()
    at_provider = browser.authorize(mcp.serve_document(), challenge)
    forged = answer(mcp, at_provider.headers["Location"], OTHER_ISSUER)

    refused = browser.get(forged)

    assert_error_page(refused)
    assert mcp.provider.redeemed == []


def test_the_development_provider_promises_iss_and_the_flow_passes_with_it(mcp: Mcp) -> None:
    _, workspace = mcp.person("alice")
    client_id = mcp.serve_document()
    _, challenge = pkce()

    code = Browser(mcp).code_for(client_id, challenge, workspace=workspace)

    assert mcp.provider.provider.discovery()["authorization_response_iss_parameter_supported"]
    assert code
    assert len(mcp.provider.redeemed) == 1
