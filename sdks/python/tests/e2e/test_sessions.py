"""`client.auth.sessions` and `sign_out_everywhere` against the local stack: two sign-ins of
one person, one ended from the other, then every one ended; an ended sign-in's token is
refused on its very next request."""

from __future__ import annotations

import pytest

from memory_sdk import (
    AuthenticationError,
    MemoryClient,
    NotFoundError,
    OAuthError,
    PermissionDeniedError,
)
from memory_sdk.transport import USER_AGENT
from tests.e2e.conftest import Stack
from tests.e2e.test_tokens import id_token

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

UNKNOWN_SIGN_IN = "01JDXK4P9V3K5M8N1P4R6T0W2Z"


async def test_one_sign_in_ends_another_then_every_one_ends(stack: Stack) -> None:
    async with (
        MemoryClient(endpoint=stack.endpoint, backend="svc") as laptop,
        MemoryClient(endpoint=stack.endpoint, backend="svc") as phone,
    ):
        await phone.auth.exchange(await id_token(stack, "sdk-e2e-sessions"))
        laptop_pair = await laptop.auth.exchange(await id_token(stack, "sdk-e2e-sessions"))
        listed = await laptop.auth.sessions.list()
        phone_id = next(s.id for s in await phone.auth.sessions.list() if s.current)

        await laptop.auth.sessions.revoke(phone_id)
        with pytest.raises(AuthenticationError) as phone_refused:
            await phone.auth.whoami()
        after_one = await laptop.auth.sessions.list()
        with pytest.raises(NotFoundError) as ended_again:
            await laptop.auth.sessions.revoke(phone_id)

        await laptop.auth.sign_out_everywhere()
        with pytest.raises(AuthenticationError) as laptop_refused:
            await laptop.auth.whoami()
        with pytest.raises(OAuthError) as refresh_refused:
            await laptop.auth.refresh_access_token(laptop_pair.refresh_token)

    assert len(listed) == 2
    assert [s.current for s in listed] == [True, False]  # newest first: the laptop's
    assert listed[1].id == phone_id
    assert all(s.user_agent == USER_AGENT for s in listed)
    assert all(s.last_refreshed_at is None and s.expires_at > s.created_at for s in listed)
    assert phone_refused.value.code == "revoked_credentials"
    assert [s.id for s in after_one] == [listed[0].id]
    assert ended_again.value.status == 404
    assert laptop_refused.value.code == "revoked_credentials"
    assert refresh_refused.value.code == "invalid_grant"


async def test_an_unknown_sign_in_is_not_found_and_a_key_may_not_list_them(
    stack: Stack,
) -> None:
    async with MemoryClient(endpoint=stack.endpoint, backend="svc") as person:
        await person.auth.exchange(await id_token(stack, "sdk-e2e-sessions-key"))
        with pytest.raises(NotFoundError) as unknown:
            await person.auth.sessions.revoke(UNKNOWN_SIGN_IN)
        key = await person.auth.create_api_key("sessions e2e")
        assert key.key is not None
    async with MemoryClient(endpoint=stack.endpoint, api_key=key.key) as keyed:
        with pytest.raises(PermissionDeniedError) as refused:
            await keyed.auth.sessions.list()

    assert (unknown.value.status, unknown.value.code) == (404, "not_found")
    assert (refused.value.status, refused.value.code) == (403, "insufficient_scope")
