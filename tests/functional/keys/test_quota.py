"""A key's daily quota (requestsPerDay): refused with 429 quota_exceeded at the routes and
denied with the code and the retry time at the authorizer, from the item the decision reads
anyway; back at UTC midnight; `key.quota_exceeded` once per key and day."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from chalicelib.clock import FrozenClock
from chalicelib.runtime import Services
from tests.fixtures.events import bearer, request_event
from tests.functional.conftest import Api, another_container
from tests.functional.decisions.conftest import Invoke, effect

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
EVENTS = "/v1/auth/events"
EVENING = datetime(2026, 11, 24, 23, 0, tzinfo=UTC)



@pytest.fixture
def sent(services: Services) -> list[str]:
    """The DynamoDB operations of decisions (not their usage writes), one per request."""
    operations: list[str] = []

    def on_send(request: Any, **_: Any) -> None:
        operations.append(request.headers["X-Amz-Target"].decode().rsplit(".", 1)[-1])

    services.dynamodb.meta.events.register("before-send.dynamodb", on_send)
    return operations


def statuses(api: Api, key: dict[str, Any], times: int) -> list[int]:
    return [api.call("GET", WHOAMI, key["key"]).status for _ in range(times)]


def quota_events(api: Api, owner: str) -> list[dict[str, Any]]:
    answer = api.call("GET", f"{EVENTS}?type=key.quota_exceeded", owner)
    assert answer.status == 200, answer.body
    return list(answer.json["events"])


def test_a_key_is_refused_once_its_quota_is_used_until_utc_midnight(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    clock.at = EVENING
    key = api.create_key(alice, requestsPerDay=3)

    allowed = statuses(api, key, 3)
    clock.at = datetime(2026, 11, 24, 23, 59, 30, tzinfo=UTC)
    refused = api.call("GET", WHOAMI, key["key"])
    clock.at = datetime(2026, 11, 25, 0, 0, tzinfo=UTC)
    next_day = statuses(api, key, 3)

    assert key["requestsPerDay"] == 3
    assert allowed == [200, 200, 200]
    assert refused.status == 429 and refused.code == "quota_exceeded"
    assert refused.headers["Retry-After"] == "30"
    assert next_day == [200, 200, 200]
    assert api.call("GET", WHOAMI, key["key"]).code == "quota_exceeded"


def test_refusals_are_not_counted_and_the_event_is_recorded_once_per_day(
    api: Api, alice: str, clock: FrozenClock, services: Services
) -> None:
    clock.at = EVENING
    key = api.create_key(alice, requestsPerDay=2)
    statuses(api, key, 6)
    other = another_container(services)
    record = services.key_store.find_by_hash(
        services.key_store.get_with_ciphertext("usr_alice", key["id"])[0].key_hash  # type: ignore[index]
    )
    assert record is not None
    other.resolver.resolve(bearer(key["key"]), None)  # another container refuses it too
    clock.advance(minutes=5)
    statuses(api, key, 1)

    usage = api.call("GET", f"{KEYS}/{key['id']}/usage?granularity=hour", alice).json
    found = quota_events(api, alice)

    assert sum(b["requests"] for b in usage["buckets"]) == 2
    assert [(e["keyId"], e["data"]) for e in found] == [
        (key["id"], {"requestsPerDay": 2, "day": "20261124"})
    ]


def test_other_containers_count_reaches_the_decision_through_the_key_item(
    api: Api, alice: str, clock: FrozenClock, services: Services
) -> None:
    clock.at = EVENING
    key = api.create_key(alice, requestsPerDay=4)
    other = another_container(services)
    for _ in range(2):  # the first of the window is written with the item
        assert other.resolver.resolve(bearer(key["key"]), None).__class__.__name__ == "Principal"
    clock.advance(minutes=5)
    other.resolver.resolve(bearer(key["key"]), None)  # writes the other two

    answers = statuses(api, key, 2)

    assert answers == [200, 429]  # 3 counted there, 1 here: the fourth is the last


def test_the_quota_check_reads_nothing_more_than_the_decision(
    api: Api, alice: str, clock: FrozenClock, sent: list[str]
) -> None:
    clock.at = EVENING
    key = api.create_key(alice, requestsPerDay=100)
    statuses(api, key, 1)
    sent.clear()

    statuses(api, key, 1)

    assert sent == ["GetItem"]


def test_the_authorizer_denies_with_the_code_and_the_seconds_to_midnight(
    api: Api, alice: str, clock: FrozenClock, authorize: Invoke
) -> None:
    clock.at = EVENING
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws, requestsPerDay=1)
    event = request_event("/v1/memory/items", bearer(key["key"]), ws)

    first = authorize(event)
    second = authorize(event)

    assert effect(first) == "Allow"
    assert effect(second) == "Deny"
    assert second["context"] == {"code": "quota_exceeded", "retryAfter": 3600}


def test_patch_sets_and_removes_the_quota(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    set_ = api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"requestsPerDay": 1})
    statuses(api, key, 1)
    refused = api.call("GET", WHOAMI, key["key"])
    removed = api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"requestsPerDay": None})
    label = api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"label": "renamed"})

    assert set_.json["requestsPerDay"] == 1
    assert refused.code == "quota_exceeded"
    assert removed.json["requestsPerDay"] is None
    assert api.call("GET", WHOAMI, key["key"]).status == 200
    assert label.json["requestsPerDay"] is None


@pytest.mark.parametrize("value", [0, 10_000_001, "100", 1.5, True])
def test_a_quota_out_of_range_is_invalid_quota(api: Api, alice: str, value: Any) -> None:
    answer = api.call("POST", KEYS, alice, body={"label": "k", "requestsPerDay": value})

    assert answer.status == 400 and answer.code == "invalid_quota"


def test_a_rotated_key_keeps_its_quota(api: Api, alice: str) -> None:
    key = api.create_key(alice, requestsPerDay=10_000_000)

    successor = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice)

    assert successor.json["requestsPerDay"] == 10_000_000


def test_a_rotated_keys_successor_keeps_the_days_count_then_429(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    clock.at = EVENING
    key = api.create_key(alice, requestsPerDay=3)
    used = statuses(api, key, 2)

    successor = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice).json
    answers = statuses(api, successor, 2)

    assert used == [200, 200]
    assert answers == [200, 429]
    assert api.call("GET", WHOAMI, successor["key"]).code == "quota_exceeded"


def test_a_successor_keeps_the_count_another_container_wrote(
    api: Api, alice: str, clock: FrozenClock, services: Services
) -> None:
    clock.at = EVENING
    key = api.create_key(alice, requestsPerDay=3)
    other = another_container(services)
    for _ in range(2):
        other.resolver.resolve(bearer(key["key"]), None)
    clock.advance(minutes=5)
    other.resolver.resolve(bearer(key["key"]), None)  # writes the other two: 3 in all

    successor = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice).json

    assert statuses(api, successor, 1) == [429]


def test_a_successor_rotated_on_another_day_starts_from_zero(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    clock.at = EVENING
    key = api.create_key(alice, requestsPerDay=2)
    statuses(api, key, 2)
    clock.at = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)

    successor = api.call("POST", f"{KEYS}/{key['id']}/rotate", alice).json

    assert statuses(api, successor, 3) == [200, 200, 429]
