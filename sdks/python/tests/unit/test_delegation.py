"""`client.auth.delegate`, `client.auth.revoke` (sign-out), and a client built on a delegated
token, which never refreshes and says so when its token expires."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory_sdk import MemoryClient
from memory_sdk.errors import AuthenticationError, DelegatedTokenExpiredError, NotSupportedError
from memory_sdk.models import DelegatedToken
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, FakeService, problem

DELEGATED = "eyJ" + "hbGciOiJSUzI1NiJ9.eyJyb290Ijoia2V5XzEifQ.ZGVsZWdhdGVk"
REFRESH = "rt_" + "unitTestRefreshToken000000000000"
WORKSPACE = "ws_01JD7Q2X9V3K5M8N1P4R6T0W2Y"

pytestmark = pytest.mark.anyio
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


def client_for(fake: FakeService, **options: Any) -> MemoryClient:
    return MemoryClient(
        api_key=ADMIN_KEY,
        endpoint=ENDPOINT,
        svc={"backoff": 0},
        http_transport=fake.transport(),
        **options,
    )


def delegated_answer(expires_in: int = 900, scope: str = "memory") -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "access_token": DELEGATED,
            "issued_token_type": ACCESS_TOKEN_TYPE,
            "token_type": "Bearer",
            "expires_in": expires_in,
            "scope": scope,
        },
    )


async def test_delegate_exchanges_the_clients_own_key_for_a_narrower_token() -> None:
    fake = FakeService(delegated_answer(300, "memory entities"))

    async with client_for(fake) as client:
        token = await client.auth.delegate(
            workspace_id=WORKSPACE, scopes=["memory", "entities"], expires_in=300, actor="browser"
        )

    assert fake.requests[0].url.path == "/v1/auth/exchange"
    assert "Authorization" not in fake.requests[0].headers
    assert fake.body(0) == {
        "subject_token": ADMIN_KEY,
        "subject_token_type": ACCESS_TOKEN_TYPE,
        "workspace_id": WORKSPACE,
        "scope": "memory entities",
        "expires_in": 300,
        "actor": "browser",
    }
    assert isinstance(token, DelegatedToken)
    assert token.scopes == ("memory", "entities") and token.expires_in == 300
    assert DELEGATED not in repr(token)


async def test_delegate_can_hand_on_a_token_it_was_given() -> None:
    fake = FakeService(delegated_answer())

    async with client_for(fake) as client:
        await client.auth.delegate(subject=DELEGATED, scopes=["memory"], actor="sub-agent")

    assert fake.body(0)["subject_token"] == DELEGATED


async def test_revoke_signs_out_the_held_refresh_token_and_forgets_it() -> None:
    pair = {"access_token": DELEGATED, "token_type": "Bearer", "expires_in": 3600}
    fake = FakeService(
        httpx.Response(200, json={**pair, "refresh_token": REFRESH}), httpx.Response(200)
    )

    async with client_for(fake) as client:
        await client.auth.exchange("id-" + "token")
        await client.auth.revoke()
        with pytest.raises(ValueError, match="no refresh token"):
            await client.auth.refresh_access_token()

    assert fake.requests[1].url.path == "/v1/auth/revoke"
    assert fake.body(1) == {"token": REFRESH}


async def test_a_delegated_client_says_clearly_that_its_token_expired() -> None:
    fake = FakeService(problem(401, "expired_credentials", "The credential has expired."))
    client = MemoryClient.from_delegated_token(
        DELEGATED, endpoint=ENDPOINT, http_transport=fake.transport()
    )

    async with client:
        with pytest.raises(DelegatedTokenExpiredError) as raised:
            await client.auth.whoami()

    assert isinstance(raised.value, AuthenticationError)
    assert "cannot be refreshed" in str(raised.value)
    assert fake.requests[0].headers["Authorization"] == f"Bearer {DELEGATED}"


async def test_a_delegated_client_refuses_to_refresh() -> None:
    client = MemoryClient.from_delegated_token(
        DELEGATED, endpoint=ENDPOINT, http_transport=FakeService().transport()
    )

    async with client:
        with pytest.raises(NotSupportedError, match="cannot be refreshed"):
            await client.auth.refresh_access_token()


async def test_a_key_client_keeps_the_plain_authentication_error() -> None:
    fake = FakeService(problem(401, "expired_credentials"))

    async with client_for(fake) as client:
        with pytest.raises(AuthenticationError) as raised:
            await client.auth.whoami()

    assert not isinstance(raised.value, DelegatedTokenExpiredError)
