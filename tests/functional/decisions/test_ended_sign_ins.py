"""The data-plane authorizer refuses a user token (and a token delegated from one) on the very
next request after its sign-in ended: sign-out, reuse detection, sign out everywhere, ending
it from the list. API Gateway answers 401 (the authorizer's `Unauthorized`)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.clock import FrozenClock
from chalicelib.runtime import Services
from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import Api
from tests.functional.decisions.conftest import Invoke, effect
from tests.functional.oauth import delegated, exchange, refresh, trust
from tests.oidc_issuer import FakeIssuer

MEMORY = "/v1/memory/items"


@pytest.fixture
def idp(services: Services) -> FakeIssuer:
    issuer = FakeIssuer()
    trust(services, issuer)
    return issuer


@pytest.fixture
def signed_in(api: Api, idp: FakeIssuer) -> dict[str, Any]:
    """A sign-in at the exchange, with a workspace of its own."""
    answer = exchange(api, idp.id_token("alice"))
    assert answer.status == 200, answer.body
    pair = dict(answer.json)
    pair["workspace"] = api.workspace(pair["access_token"])
    return pair


def decide(authorize: Invoke, credential: str, workspace: str) -> dict[str, Any]:
    return authorize(request_event(MEMORY, bearer(credential), workspace))


def assert_unauthorized(authorize: Invoke, credential: str, workspace: str) -> None:
    with pytest.raises(Exception, match=r"\AUnauthorized\Z"):
        decide(authorize, credential, workspace)


def sign_in_of(api: Api, pair: dict[str, Any]) -> str:
    return str(api.services.verifier.verify(pair["access_token"])["sid"])


ENDINGS = ["sign-out", "reuse detected", "sign out everywhere", "ended from the list"]


def end(api: Api, clock: FrozenClock, pair: dict[str, Any], how: str) -> None:
    if how == "sign-out":
        answer = api.call("POST", "/v1/auth/revoke", body={"token": pair["refresh_token"]})
        assert answer.status == 200
    elif how == "reuse detected":
        assert refresh(api, pair["refresh_token"]).status == 200
        clock.advance(minutes=2)  # past the retry window
        assert refresh(api, pair["refresh_token"]).status == 400
    elif how == "sign out everywhere":
        assert api.call("DELETE", "/v1/auth/sessions", pair["access_token"]).status == 204
    else:
        path = f"/v1/auth/sessions/{sign_in_of(api, pair)}"
        assert api.call("DELETE", path, pair["access_token"]).status == 204


@pytest.mark.parametrize("how", ENDINGS)
def test_a_user_token_whose_sign_in_ended_is_unauthorized_on_the_next_decision(
    api: Api, clock: FrozenClock, signed_in: dict[str, Any], authorize: Invoke, how: str
) -> None:
    token, workspace = signed_in["access_token"], signed_in["workspace"]
    assert effect(decide(authorize, token, workspace)) == "Allow"

    end(api, clock, signed_in, how)

    assert_unauthorized(authorize, token, workspace)


@pytest.mark.parametrize("how", ENDINGS)
def test_a_token_delegated_from_a_user_token_is_unauthorized_once_its_sign_in_ended(
    api: Api, clock: FrozenClock, signed_in: dict[str, Any], authorize: Invoke, how: str
) -> None:
    workspace = signed_in["workspace"]
    token = delegated(api, signed_in["access_token"], workspace_id=workspace)
    assert effect(decide(authorize, token, workspace)) == "Allow"

    end(api, clock, signed_in, how)

    assert_unauthorized(authorize, token, workspace)


def test_a_user_token_without_a_sign_in_is_unauthorized(
    api: Api, alice: str, authorize: Invoke, services: Services
) -> None:
    from chalicelib.clock import Clock
    from chalicelib.sessions.access_tokens import TokenSigner

    workspace = api.workspace(alice)
    signer = TokenSigner(services.kms, services.signing_keys, services.settings.issuer, Clock())
    before_sessions = signer.mint("usr_alice").token  # as minted before tokens named one

    assert_unauthorized(authorize, before_sessions, workspace)
    assert effect(decide(authorize, alice, workspace)) == "Allow"
