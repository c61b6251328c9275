"""Lifetime, grace rotation, rename and allow-list, last use and audit events, through the
SDK against the local stack over real HTTP (its server sees every request from 127.0.0.1)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from memory_sdk import (
    ApiKey,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    MemoryClient,
    PermissionDeniedError,
    UserActor,
)
from tests.e2e.conftest import Stack, digest
from tests.e2e.test_tokens import id_token

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def plaintext(key: ApiKey) -> str:
    assert key.key is not None
    return key.key.get_secret_value()


def as_key(stack: Stack, key: ApiKey) -> MemoryClient:
    return MemoryClient(endpoint=stack.endpoint, api_key=plaintext(key))


async def test_list_with_a_query_finds_only_matching_labels_caselessly(
    user: MemoryClient,
) -> None:
    wanted = await user.auth.create_api_key("e2e Searched Ångström")
    await user.auth.create_api_key("e2e other")

    found = await user.auth.list_api_keys(query="SEARCHED ÅNGSTRÖM", all_workspaces=True)

    assert [key.id for key in found] == [wanted.id]
    with pytest.raises(BadRequestError) as refused:
        await user.auth.list_api_keys(query="x" * 101, all_workspaces=True)
    assert refused.value.code == "invalid_parameter"


async def test_a_chosen_lifetime_is_kept_by_rotation(user: MemoryClient) -> None:
    created = await user.auth.create_api_key("e2e ten days", expires_in_days=10)

    successor = await user.auth.rotate_api_key(created.id)

    assert created.expires_at - created.created_at == timedelta(days=10)
    assert successor.expires_at - successor.created_at == timedelta(days=10)


async def test_the_old_key_works_during_the_grace_then_is_refused(
    user: MemoryClient, stack: Stack
) -> None:
    old = await user.auth.create_api_key("e2e grace")

    successor = await user.auth.rotate_api_key(old.id, grace_period_seconds=2)

    during = await user.auth.get_api_key(old.id)
    assert (during.status, during.replaced_by) == ("active", successor.id)
    async with as_key(stack, old) as old_client:
        assert (await old_client.auth.whoami()).key_id == old.id
        # Wait out the grace (the stack's clock is this machine's), then ask again.
        await asyncio.sleep((during.expires_at - datetime.now(UTC)).total_seconds() + 0.2)
        with pytest.raises(AuthenticationError) as refused:
            await old_client.auth.whoami()
    assert refused.value.code == "revoked_credentials"
    async with as_key(stack, successor) as new_client:
        assert (await new_client.auth.whoami()).key_id == successor.id
    with pytest.raises(ConflictError):
        await user.auth.rotate_api_key(old.id, grace_period_seconds=60)


async def test_last_used_at_appears_after_a_use(user: MemoryClient, stack: Stack) -> None:
    created = await user.auth.create_api_key("e2e used")
    assert created.last_used_at is None

    async with as_key(stack, created) as client:
        await client.auth.whoami()

    used = await user.auth.get_api_key(created.id)
    assert used.last_used_at is not None
    assert used.last_used_at.minute % 5 == 0 and used.last_used_at.second == 0


async def test_an_allow_list_admits_the_inside_refuses_the_outside_and_can_be_cleared(
    user: MemoryClient, stack: Stack
) -> None:
    created = await user.auth.create_api_key("e2e fenced", allowed_cidrs=["127.0.0.0/8"])
    async with as_key(stack, created) as client:
        assert (await client.auth.whoami()).key_id == created.id

        moved = await user.auth.update_api_key(created.id, allowed_cidrs=["10.0.0.0/8"])
        with pytest.raises(PermissionDeniedError) as refused:
            await client.auth.whoami()
        cleared = await user.auth.update_api_key(created.id, label="e2e open", allowed_cidrs=None)
        assert (await client.auth.whoami()).key_id == created.id

    assert moved.allowed_cidrs == ("10.0.0.0/8",)
    assert refused.value.code == "ip_not_allowed"
    assert (cleared.label, cleared.allowed_cidrs) == ("e2e open", None)
    with pytest.raises(BadRequestError) as invalid:
        await user.auth.update_api_key(created.id, allowed_cidrs=["10.0.0.1/8"])
    assert invalid.value.code == "invalid_cidr"


async def test_every_action_is_an_audit_event_with_its_actor_and_no_secret(
    stack: Stack,
) -> None:
    async with MemoryClient(endpoint=stack.endpoint, backend="svc") as owner:
        # A user of its own, signed in through the development issuer: a log of its own.
        await owner.auth.exchange(await id_token(stack, "sdk-events"))
        created = await owner.auth.create_api_key("e2e audited")
        revealed = await owner.auth.reveal_api_key(created.id)
        await owner.auth.update_api_key(created.id, label="e2e audited 2")
        successor = await owner.auth.rotate_api_key(created.id)
        await owner.auth.revoke_api_key(successor.id)
        who = await owner.auth.whoami()
        me = who.user_id

        events = [e async for e in owner.auth.iter_events()]
        of_key = await owner.auth.list_events(key_id=created.id, type="key.revealed")

    assert [e.type for e in events] == [
        "key.revoked", "key.rotated", "key.updated", "key.revealed", "key.created"
    ]
    for found in events:
        # The person as their sign-in named them (the development issuer sends an email).
        assert found.actor == UserActor(
            user_id=me, credential="user_token", key_id=None, email=who.email, name=who.name
        )
        assert found.source_ip == "127.0.0.1"
        assert found.user_agent and found.user_agent.startswith("memory-sdk-python/")
        dumped = found.model_dump_json()
        for secret in (created, revealed, successor):
            assert digest(plaintext(secret)) not in dumped
            assert plaintext(secret) not in dumped
    assert [e.type for e in of_key.events] == ["key.revealed"]
