"""Every `client.auth` key method against the local stack, over real HTTP."""

from __future__ import annotations

import hmac
import logging

import pytest

from memory_sdk import (
    ApiKey,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    GoneError,
    MemoryClient,
    NotFoundError,
    PermissionDeniedError,
)
from tests.e2e.conftest import Stack, digest

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

DATA_PLANE = ("memory", "entities", "reasoning", "ontology", "skills")


def plaintext(key: ApiKey) -> str:
    assert key.key is not None
    return key.key.get_secret_value()


async def admin_key(user: MemoryClient, label: str = "e2e admin") -> ApiKey:
    return await user.auth.create_api_key(label)


async def test_create_without_category_makes_an_admin_key_shown_once(
    user: MemoryClient, stack: Stack
) -> None:
    created = await user.auth.create_api_key("e2e default")
    listed = await user.auth.list_api_keys()

    assert created.category == "admin"
    assert created.workspace_id is None
    assert created.status == "active"
    assert plaintext(created).startswith("svc_")
    assert created.hint is not None and plaintext(created).endswith(created.hint[-4:])
    assert created.id in [k.id for k in listed]
    assert all(k.key is None for k in listed)


async def test_create_with_a_workspace_and_no_category_is_refused_as_the_spec_says(
    user: MemoryClient, stack: Stack
) -> None:
    with pytest.raises(BadRequestError) as raised:
        await user.auth.create_api_key("e2e refused", workspace_id=stack.workspace_id)

    assert raised.value.status == 400
    assert raised.value.code == "workspace_id_not_allowed"


async def test_create_with_category_workspace_binds_the_key(
    user: MemoryClient, stack: Stack
) -> None:
    created = await user.auth.create_api_key(
        "e2e workspace", workspace_id=stack.workspace_id, category="workspace"
    )

    assert created.category == "workspace"
    assert created.workspace_id == stack.workspace_id
    assert created.scopes == DATA_PLANE
    assert plaintext(created).startswith("svc_")


async def test_list_with_a_workspace_shows_only_its_keys(user: MemoryClient, stack: Stack) -> None:
    bound = await user.auth.create_api_key(
        "e2e listed", ["memory"], stack.workspace_id, category="workspace"
    )
    unbound = await admin_key(user, "e2e unbound")

    in_workspace = [k.id for k in await user.auth.list_api_keys(stack.workspace_id)]
    everywhere = [k.id for k in await user.auth.list_api_keys()]
    revoked = await user.auth.list_api_keys(status="revoked")

    assert bound.id in in_workspace and unbound.id not in in_workspace
    assert bound.id in everywhere and unbound.id in everywhere
    assert all(k.status == "revoked" for k in revoked)


async def test_a_configured_workspace_filters_the_list_unless_all_workspaces(
    user: MemoryClient, stack: Stack
) -> None:
    bound = await user.auth.create_api_key(
        "e2e filtered", ["memory"], stack.workspace_id, category="workspace"
    )
    unbound = await admin_key(user, "e2e not filtered")
    async with MemoryClient(
        endpoint=stack.endpoint, access_token=stack.token, workspace_id=stack.workspace_id
    ) as client:
        by_default = [k.id for k in await client.auth.list_api_keys()]
        every = [k.id async for k in client.auth.iter_api_keys(all_workspaces=True)]

    assert bound.id in by_default and unbound.id not in by_default
    assert bound.id in every and unbound.id in every


async def test_reveal_returns_the_created_plaintext(user: MemoryClient, stack: Stack) -> None:
    created = await user.auth.create_api_key(
        "e2e reveal", workspace_id=stack.workspace_id, category="workspace"
    )

    revealed = await user.auth.reveal_api_key(created.id, stack.workspace_id)
    fetched = await user.auth.get_api_key(created.id)

    assert revealed.id == created.id
    assert hmac.compare_digest(digest(plaintext(revealed)), digest(plaintext(created)))
    assert fetched.key is None
    assert fetched.revealable


async def test_rotate_returns_a_successor_and_revokes_the_old_key(
    user: MemoryClient, stack: Stack
) -> None:
    old = await user.auth.create_api_key(
        "e2e rotate", ["memory"], stack.workspace_id, category="workspace"
    )

    new = await user.auth.rotate_api_key(old.id)
    old_after = await user.auth.get_api_key(old.id)

    assert new.id != old.id
    assert not hmac.compare_digest(digest(plaintext(new)), digest(plaintext(old)))
    assert (new.label, new.category, new.workspace_id, new.scopes) == (
        old.label,
        old.category,
        old.workspace_id,
        old.scopes,
    )
    assert old_after.status == "revoked"
    assert old_after.replaced_by == new.id
    async with MemoryClient(endpoint=stack.endpoint, api_key=old.key) as with_old:
        with pytest.raises(AuthenticationError) as raised:
            await with_old.auth.whoami()
    assert raised.value.code == "revoked_credentials"


async def test_rotating_a_revoked_key_is_a_conflict(user: MemoryClient) -> None:
    created = await admin_key(user, "e2e rotate twice")
    await user.auth.rotate_api_key(created.id)

    with pytest.raises(ConflictError) as raised:
        await user.auth.rotate_api_key(created.id)

    assert raised.value.code == "key_not_active"


async def test_revoke_is_effective_on_the_next_request(user: MemoryClient, stack: Stack) -> None:
    created = await admin_key(user, "e2e revoke")
    async with MemoryClient(endpoint=stack.endpoint, api_key=created.key) as with_key:
        before = await with_key.auth.whoami()
        await user.auth.revoke_api_key(created.id)
        await user.auth.revoke_api_key(created.id)  # again: still fine (204)
        with pytest.raises(AuthenticationError) as after:
            await with_key.auth.whoami()
    with pytest.raises(GoneError) as reveal:
        await user.auth.reveal_api_key(created.id)

    assert before.key_id == created.id
    assert after.value.code == "revoked_credentials"
    assert reveal.value.code == "key_revoked"


async def test_whoami_with_a_workspace_key_from_the_environment(
    user: MemoryClient, stack: Stack, sdk_environment: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = await user.auth.create_api_key(
        "e2e env", workspace_id=stack.workspace_id, category="workspace"
    )
    monkeypatch.setenv("MEMORY_API_KEY", plaintext(created))

    async with MemoryClient() as client:
        principal = await client.auth.whoami()

    assert client.backend == "svc"
    assert principal.credential == "api_key"
    assert principal.key_id == created.id
    assert principal.category == "workspace"
    assert principal.workspace_id == stack.workspace_id
    assert principal.user_id == stack.user_id


async def test_the_user_token_whoami(user: MemoryClient, stack: Stack) -> None:
    principal = await user.auth.whoami()

    assert principal.credential == "user_token"
    assert principal.user_id == stack.user_id
    assert principal.key_id is None
    assert "workspace:admin" in principal.scopes


async def test_an_admin_key_manages_keys_of_the_workspace_it_names(
    user: MemoryClient, stack: Stack
) -> None:
    admin = await admin_key(user)
    async with MemoryClient(
        endpoint=stack.endpoint, api_key=admin.key, workspace_id=stack.workspace_id
    ) as client:
        created = await client.auth.create_api_key("e2e by admin", category="workspace")
        listed = [k.id for k in await client.auth.list_api_keys()]

    assert created.workspace_id == stack.workspace_id
    assert created.id in listed


async def test_a_workspace_key_cannot_manage_keys(user: MemoryClient, stack: Stack) -> None:
    created = await user.auth.create_api_key(
        "e2e no manage", workspace_id=stack.workspace_id, category="workspace"
    )
    async with MemoryClient(endpoint=stack.endpoint, api_key=created.key) as client:
        with pytest.raises(PermissionDeniedError) as raised:
            await client.auth.list_api_keys()

    assert raised.value.code == "insufficient_scope"


async def test_a_workspace_key_naming_another_workspace_is_refused(
    user: MemoryClient, stack: Stack
) -> None:
    created = await user.auth.create_api_key(
        "e2e mismatch", workspace_id=stack.workspace_id, category="workspace"
    )
    async with MemoryClient(
        endpoint=stack.endpoint, api_key=created.key, workspace_id="ws_00000000000000000000000000"
    ) as client:
        with pytest.raises(PermissionDeniedError) as raised:
            await client.auth.whoami()

    assert raised.value.code == "workspace_mismatch"


async def test_an_unknown_key_id_is_not_found(user: MemoryClient) -> None:
    with pytest.raises(NotFoundError) as raised:
        await user.auth.reveal_api_key("key_00000000000000000000000000")

    assert raised.value.code == "not_found"


async def test_an_unknown_key_is_an_authentication_error(stack: Stack) -> None:
    unknown = "sv" + "c_e2eUnknownKey000000000000000000000000000000"
    async with MemoryClient(endpoint=stack.endpoint, api_key=unknown) as client:
        with pytest.raises(AuthenticationError) as raised:
            await client.auth.whoami()

    assert raised.value.status == 401
    assert raised.value.code == "invalid_credentials"


async def test_no_log_line_or_repr_shows_a_key(
    user: MemoryClient, stack: Stack, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG):
        created = await user.auth.create_api_key(
            "e2e logs", category="workspace", workspace_id=stack.workspace_id
        )
        revealed = await user.auth.reveal_api_key(created.id)
        rotated = await user.auth.rotate_api_key(created.id)
        with pytest.raises(GoneError) as gone:
            await user.auth.reveal_api_key(created.id)

    secrets = [plaintext(created), plaintext(rotated), stack.token]
    shown = (
        [r.getMessage() for r in caplog.records]
        + [repr(x) for x in (created, revealed, rotated, user, user.auth, gone.value)]
        + [str(gone.value)]
    )
    assert caplog.records
    for text in shown:
        for secret in secrets:
            assert secret not in text
