"""exchange and refresh_access_token against the local stack and its development IdP.

These need `/v1/auth/exchange`, `/v1/auth/refresh` and the ready file's `idpEndpoint`
(issue 3).
"""

from __future__ import annotations

import hmac

import httpx
import pytest

from memory_sdk import MemoryClient, OAuthError, TokenPair
from tests.e2e.conftest import Stack, digest

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def id_token(stack: Stack, sub: str) -> str:
    """An ID token from the stack's development identity provider."""
    idp = stack.ready.get("idpEndpoint")
    if not idp:
        pytest.fail("the local stack's ready file has no idpEndpoint (issue 3)", pytrace=False)
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{idp}/token", json={"sub": sub, "email": f"{sub}@example.com"})
    answer.raise_for_status()
    token = answer.json()["id_token"]
    assert isinstance(token, str)
    return token


def secret(pair: TokenPair, which: str) -> str:
    value = getattr(pair, which)
    assert value is not None
    text = value.get_secret_value()
    assert isinstance(text, str)
    return text


async def test_exchange_signs_the_client_in_as_a_user(stack: Stack) -> None:
    async with MemoryClient(endpoint=stack.endpoint, backend="svc") as client:
        pair = await client.auth.exchange(await id_token(stack, "sdk-e2e-alice"))
        principal = await client.auth.whoami()

    assert pair.token_type.lower() == "bearer"
    assert 0 < pair.expires_in <= 3600
    assert pair.refresh_token is not None
    assert principal.credential == "user_token"
    assert principal.user_id.startswith("usr_")


async def test_the_same_login_maps_to_the_same_user(stack: Stack) -> None:
    async with MemoryClient(endpoint=stack.endpoint, backend="svc") as client:
        await client.auth.exchange(await id_token(stack, "sdk-e2e-bob"))
        first = await client.auth.whoami()
        await client.auth.exchange(await id_token(stack, "sdk-e2e-bob"))
        second = await client.auth.whoami()

    assert first.user_id == second.user_id


async def test_refresh_returns_a_new_pair_and_a_used_refresh_token_is_refused(
    stack: Stack,
) -> None:
    async with MemoryClient(endpoint=stack.endpoint, backend="svc") as client:
        first = await client.auth.exchange(await id_token(stack, "sdk-e2e-carol"))
        second = await client.auth.refresh_access_token()
        principal = await client.auth.whoami()
        with pytest.raises(OAuthError) as reused:
            await client.auth.refresh_access_token(first.refresh_token)

    assert not hmac.compare_digest(
        digest(secret(first, "refresh_token")), digest(secret(second, "refresh_token"))
    )
    assert principal.credential == "user_token"
    assert reused.value.code == "invalid_grant"


async def test_an_invalid_id_token_is_refused(stack: Stack) -> None:
    async with MemoryClient(endpoint=stack.endpoint, backend="svc") as client:
        with pytest.raises(OAuthError) as raised:
            await client.auth.exchange("eyJ" + "hbGciOiJSUzI1NiJ9.e30.bm90LXNpZ25lZA")

    assert raised.value.code == "invalid_grant"
