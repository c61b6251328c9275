"""DPoP end to end against the local stack: a sign-in made with `dpop=True` gets bound tokens
(the nonce asked and given by the SDK itself), and a key-bound API key works from a client
with its pair and not from one without."""

from __future__ import annotations

import pytest

from memory_sdk import AuthenticationError, DpopKey, MemoryClient
from tests.e2e.conftest import Stack
from tests.e2e.test_tokens import id_token

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


async def test_a_dpop_sign_in_gets_bound_tokens_that_refresh_with_the_same_key(
    stack: Stack,
) -> None:
    async with MemoryClient(endpoint=stack.endpoint, backend="svc", dpop=True) as client:
        pair = await client.auth.exchange(await id_token(stack, "dpop-e2e"))
        principal = await client.auth.whoami()
        refreshed = await client.auth.refresh_access_token()
        again = await client.auth.whoami()

    assert pair.token_type == "DPoP"
    assert refreshed.token_type == "DPoP"
    assert principal.credential == again.credential == "user_token"
    assert pair.access_token is not None
    token = pair.access_token.get_secret_value()
    async with MemoryClient(endpoint=stack.endpoint, access_token=token, backend="svc") as thief:
        with pytest.raises(AuthenticationError) as refused:
            await thief.auth.whoami()
    assert refused.value.code == "dpop_required"


async def test_a_key_bound_api_key_works_only_with_its_key_pair(
    stack: Stack, user: MemoryClient
) -> None:
    pair = DpopKey.generate()
    created = await user.auth.create_api_key("dpop e2e", dpop_jkt=pair.thumbprint)
    assert created.key is not None and created.dpop_jkt == pair.thumbprint
    key = created.key.get_secret_value()

    async with MemoryClient(api_key=key, endpoint=stack.endpoint, dpop=pair) as holder:
        principal = await holder.auth.whoami()
    async with MemoryClient(api_key=key, endpoint=stack.endpoint) as thief:
        with pytest.raises(AuthenticationError) as refused:
            await thief.auth.whoami()
    async with MemoryClient(api_key=key, endpoint=stack.endpoint, dpop=True) as other_pair:
        with pytest.raises(AuthenticationError) as wrong_key:
            await other_pair.auth.whoami()

    assert principal.key_id == created.id
    assert refused.value.code == "dpop_required"
    assert wrong_key.value.code == "invalid_dpop_proof"
