"""Lifetime, grace rotation, rename and allow-list, last use, and audit events, against the
scripted fake: what each method sends, and what it parses."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from memory_sdk import (
    UNCHANGED,
    ApiKey,
    AuditEvent,
    ConflictError,
    MemoryClient,
    NotSupportedError,
    SystemActor,
    UserActor,
)
from tests.unit.fakes import ADMIN_KEY, ENDPOINT, WORKSPACE_KEY, FakeService, key_resource, problem

pytestmark = pytest.mark.anyio


def svc_client(fake: FakeService, workspace_id: str | None = None) -> MemoryClient:
    return MemoryClient(
        api_key=ADMIN_KEY,
        endpoint=ENDPOINT,
        workspace_id=workspace_id,
        svc={"backoff": 0},
        http_transport=fake.transport(),
    )


def event(event_id: str, type_: str, **fields: object) -> dict[str, object]:
    body: dict[str, object] = {
        "id": event_id,
        "type": type_,
        "occurredAt": "2026-11-21T12:00:00Z",
        "actor": {"userId": "usr_1", "credential": "user_token", "keyId": None},
        "keyId": "key_1",
        "workspaceId": None,
        "sourceIp": "203.0.113.7",
        "userAgent": "memory-sdk-python/0.1.0",
        "data": {},
    }
    body.update(fields)
    return body


async def test_create_sends_the_lifetime_and_allow_list_only_when_given() -> None:
    fake = FakeService(
        httpx.Response(201, json=key_resource(plaintext=WORKSPACE_KEY)),
        httpx.Response(201, json=key_resource(plaintext=WORKSPACE_KEY)),
    )

    async with svc_client(fake) as client:
        await client.auth.create_api_key("plain")
        await client.auth.create_api_key(
            "fenced", expires_in_days=30, allowed_cidrs=("10.0.0.0/8", "2001:db8::/32")
        )

    assert fake.body(0) == {"label": "plain"}
    assert fake.body(1) == {
        "label": "fenced",
        "expiresInDays": 30,
        "allowedCidrs": ["10.0.0.0/8", "2001:db8::/32"],
    }


async def test_a_key_carries_its_last_use_and_allow_list() -> None:
    body = key_resource(lastUsedAt="2026-11-21T12:05:00Z", allowedCidrs=["10.0.0.0/8"])
    fake = FakeService(
        httpx.Response(200, json=body), httpx.Response(200, json=key_resource("key_2"))
    )

    async with svc_client(fake) as client:
        used = await client.auth.get_api_key("key_1")
        fresh = await client.auth.get_api_key("key_2")

    assert used.last_used_at == datetime(2026, 11, 21, 12, 5, tzinfo=UTC)
    assert used.allowed_cidrs == ("10.0.0.0/8",)
    assert (fresh.last_used_at, fresh.allowed_cidrs) == (None, None)


async def test_rotate_sends_a_grace_period_only_when_given() -> None:
    fake = FakeService(
        httpx.Response(201, json=key_resource("key_2", plaintext=WORKSPACE_KEY)),
        httpx.Response(201, json=key_resource("key_3", plaintext=WORKSPACE_KEY)),
    )

    async with svc_client(fake) as client:
        await client.auth.rotate_api_key("key_1")
        successor = await client.auth.rotate_api_key("key_2", grace_period_seconds=86400)

    assert fake.requests[0].content == b""
    assert fake.body(1) == {"gracePeriodSeconds": 86400}
    assert fake.requests[1].url.path == "/v1/auth/api-keys/key_2/rotate"
    assert successor.id == "key_3"


async def test_rotating_a_key_that_already_has_a_successor_is_a_conflict_and_not_resent() -> None:
    fake = FakeService(problem(409, "key_not_active"), problem(409, "key_not_active"))

    async with svc_client(fake) as client:
        with pytest.raises(ConflictError) as raised:
            await client.auth.rotate_api_key("key_1", grace_period_seconds=60)

    assert raised.value.code == "key_not_active"
    assert len(fake.requests) == 1


@pytest.mark.parametrize(
    ("kwargs", "sent"),
    [
        ({"label": "renamed"}, {"label": "renamed"}),
        ({"allowed_cidrs": None}, {"allowedCidrs": None}),
        ({"allowed_cidrs": ["127.0.0.1/32"]}, {"allowedCidrs": ["127.0.0.1/32"]}),
        ({"label": "x", "allowed_cidrs": UNCHANGED}, {"label": "x"}),
        ({}, {}),
    ],
)
async def test_update_patches_only_what_is_given(
    kwargs: dict[str, Any], sent: dict[str, object]
) -> None:
    fake = FakeService(httpx.Response(200, json=key_resource(label="renamed")))

    async with svc_client(fake) as client:
        updated = await client.auth.update_api_key("key_1", **kwargs)

    assert (fake.requests[0].method, fake.requests[0].url.path) == (
        "PATCH",
        "/v1/auth/api-keys/key_1",
    )
    assert fake.body(0) == sent
    assert isinstance(updated, ApiKey) and updated.key is None


async def test_a_patch_whose_answer_was_lost_is_not_resent() -> None:
    fake = FakeService(httpx.ReadTimeout("lost"), httpx.Response(200, json=key_resource()))

    async with svc_client(fake) as client:
        with pytest.raises(Exception) as raised:
            await client.auth.update_api_key("key_1", label="x")

    assert type(raised.value).__name__ == "RequestTimeoutError"
    assert len(fake.requests) == 1


async def test_list_events_sends_its_filters_and_no_configured_workspace() -> None:
    page = {"events": [event("evt_2", "key.revoked"), event("evt_1", "key.created")],
            "nextCursor": "c1"}
    fake = FakeService(httpx.Response(200, json=page))

    async with svc_client(fake, workspace_id="ws_conf") as client:
        found = await client.auth.list_events(type="key.revoked", key_id="key_1", limit=2)

    request = fake.requests[0]
    assert (request.method, request.url.path) == ("GET", "/v1/auth/events")
    assert dict(request.url.params) == {"limit": "2", "type": "key.revoked", "keyId": "key_1"}
    assert "X-Workspace-Id" not in request.headers
    assert [e.id for e in found.events] == ["evt_2", "evt_1"]
    assert found.next_cursor == "c1"


async def test_list_events_names_a_workspace_when_asked() -> None:
    fake = FakeService(httpx.Response(200, json={"events": [], "nextCursor": None}))

    async with svc_client(fake) as client:
        await client.auth.list_events(workspace_id="ws_1")

    assert fake.requests[0].headers["X-Workspace-Id"] == "ws_1"


async def test_events_parse_both_kinds_of_actor_and_keep_their_data() -> None:
    leaked = event(
        "evt_3",
        "key.leaked",
        actor={"system": "github-secret-scanning"},
        data={"url": "https://github.com/o/r", "source": "content"},
    )
    fake = FakeService(httpx.Response(200, json={"events": [leaked, event("evt_1", "x.new")]}))

    async with svc_client(fake) as client:
        page = await client.auth.list_events()

    first, second = page.events
    assert isinstance(first, AuditEvent)
    assert first.actor == SystemActor(system="github-secret-scanning")
    assert first.data["url"] == "https://github.com/o/r"
    assert isinstance(second.actor, UserActor) and second.actor.user_id == "usr_1"
    assert second.type == "x.new"  # a type added later still parses
    assert first.occurred_at == datetime(2026, 11, 21, 12, tzinfo=UTC)


async def test_iter_events_follows_every_page() -> None:
    fake = FakeService(
        httpx.Response(200, json={"events": [event("evt_2", "a")], "nextCursor": "c1"}),
        httpx.Response(200, json={"events": [event("evt_1", "b")], "nextCursor": None}),
    )

    async with svc_client(fake) as client:
        ids = [e.id async for e in client.auth.iter_events(key_id="key_1")]

    assert ids == ["evt_2", "evt_1"]
    assert dict(fake.requests[1].url.params) == {"limit": "100", "cursor": "c1", "keyId": "key_1"}


@pytest.mark.parametrize("use", ["update_api_key", "list_events", "iter_events"])
def test_the_new_methods_raise_not_supported_on_bolt(use: str) -> None:
    with pytest.raises(NotSupportedError):
        getattr(MemoryClient(backend="bolt").auth, use)


async def test_create_and_update_send_the_daily_quota_only_when_given() -> None:
    fake = FakeService(
        httpx.Response(201, json=key_resource(plaintext=WORKSPACE_KEY, requestsPerDay=500)),
        httpx.Response(200, json=key_resource(requestsPerDay=None)),
        httpx.Response(200, json=key_resource(requestsPerDay=None)),
    )

    async with svc_client(fake) as client:
        created = await client.auth.create_api_key("capped", requests_per_day=500)
        await client.auth.update_api_key("key_1", requests_per_day=None)
        await client.auth.update_api_key("key_1", label="x")

    assert fake.body(0) == {"label": "capped", "requestsPerDay": 500}
    assert created.requests_per_day == 500
    assert fake.body(1) == {"requestsPerDay": None}
    assert fake.body(2) == {"label": "x"}


async def test_usage_asks_for_the_range_and_parses_the_buckets() -> None:
    body = {
        "keyId": "key_1",
        "granularity": "hour",
        "buckets": [
            {"start": "2026-11-21T10:00:00Z", "requests": 12},
            {"start": "2026-11-21T11:00:00Z", "requests": 0},
        ],
        "complete": True,
    }
    fake = FakeService(httpx.Response(200, json=body))

    async with svc_client(fake) as client:
        usage = await client.auth.usage(
            "key_1", granularity="hour", start="2026-11-21T10:00:00Z", end="2026-11-21T12:00:00Z"
        )

    assert fake.requests[0].url.path == "/v1/auth/api-keys/key_1/usage"
    assert dict(fake.requests[0].url.params) == {
        "granularity": "hour", "from": "2026-11-21T10:00:00Z", "to": "2026-11-21T12:00:00Z"
    }
    assert [(b.start.hour, b.requests) for b in usage.buckets] == [(10, 12), (11, 0)]
    assert usage.complete and usage.key_id == "key_1"


async def test_a_key_over_its_quota_is_a_rate_limit_error_with_the_code() -> None:
    fake = FakeService(problem(429, "quota_exceeded", **{"Retry-After": "86000"}))

    async with svc_client(fake) as client:
        with pytest.raises(Exception) as raised:
            await client.auth.whoami()

    assert type(raised.value).__name__ == "RateLimitError"
    assert raised.value.code == "quota_exceeded"  # type: ignore[attr-defined]
    assert len(fake.requests) == 1  # a retry after midnight is the caller's choice


def test_usage_raises_not_supported_on_bolt() -> None:
    with pytest.raises(NotSupportedError):
        MemoryClient(backend="bolt").auth.usage("key_1")
