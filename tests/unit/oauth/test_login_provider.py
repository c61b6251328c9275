"""This service as the login provider's client: which answers at the callback name the
provider in `iss` (RFC 9207), as the provider's discovery document promises (no I/O)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.config import LoginProvider
from chalicelib.oauth.login_provider import LoginProviderClient

ISSUER = "https://login.example.test"
OTHER = "https://evil.example.test"
CALLBACK = "https://auth.example.test/v1/oauth/callback"


class Discovery:
    """The provider's discovery document, served without HTTP; counts the reads."""

    def __init__(self, **fields: Any):
        self.document = {
            "issuer": ISSUER,
            "authorization_endpoint": f"{ISSUER}/authorize",
            "token_endpoint": f"{ISSUER}/token",
            **fields,
        }
        self.reads = 0

    def get_json(self, url: str) -> Any:
        assert url == f"{ISSUER}/.well-known/openid-configuration"
        self.reads += 1
        return self.document

    def post_form(self, url: str, form: dict[str, str]) -> tuple[int, Any]:
        raise AssertionError("no token request in these tests")


def client_of(transport: Discovery, provider: LoginProvider | None = None) -> LoginProviderClient:
    return LoginProviderClient(provider or LoginProvider(ISSUER, "client-1"), CALLBACK, transport)


def test_a_provider_that_sends_iss_is_believed_only_with_its_own() -> None:
    client = client_of(Discovery(authorization_response_iss_parameter_supported=True))

    answers = {issuer: client.answered_by_provider(issuer) for issuer in (ISSUER, OTHER, "")}
    without = client.answered_by_provider(None)

    assert answers == {ISSUER: True, OTHER: False, "": False}
    assert without is False


@pytest.mark.parametrize("advertised", [None, False, "true"])
def test_a_provider_that_does_not_promise_iss_may_answer_without_it(advertised: Any) -> None:
    promise = {"authorization_response_iss_parameter_supported": advertised}
    client = client_of(Discovery(**({} if advertised is None else promise)))

    without = client.answered_by_provider(None)
    other = client.answered_by_provider(OTHER)

    assert without is True
    assert other is False


def test_configured_endpoints_skip_the_document_so_iss_is_checked_only_when_sent() -> None:
    transport = Discovery(authorization_response_iss_parameter_supported=True)
    configured = LoginProvider(
        ISSUER, "client-1",
        authorization_endpoint=f"{ISSUER}/oauth/authorize",
        token_endpoint=f"{ISSUER}/oauth/token",
    )
    client = client_of(transport, configured)

    verdicts = [client.answered_by_provider(None), client.answered_by_provider(OTHER)]

    assert verdicts == [True, False]
    assert transport.reads == 0


def test_the_document_is_read_once_for_the_sign_in_and_its_answer() -> None:
    transport = Discovery(authorization_response_iss_parameter_supported=True)
    client = client_of(transport)

    location = client.authorization_url("state-1", "nonce-1", "v" * 43)
    verdict = client.answered_by_provider(None)

    assert location.startswith(f"{ISSUER}/authorize?")
    assert verdict is False
    assert transport.reads == 1
