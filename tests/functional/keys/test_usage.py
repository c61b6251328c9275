"""Usage per key and hour: counted in memory, written with the lastUsedAt write (at most one
write per key, window and container), never over-counted; read by hour or day."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from botocore.exceptions import ReadTimeoutError

from chalicelib.access.principal import Principal
from chalicelib.clock import FrozenClock
from chalicelib.decisions.resolution import Resolver
from chalicelib.runtime import Services
from tests.functional.conftest import Api, another_container

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"
# A window's start (5-minute windows), mid-morning UTC.
MORNING = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)


@pytest.fixture
def flushes(services: Services) -> list[dict[str, Any]]:
    """Every usage flush sent to DynamoDB, by any container: its first write (the credential
    item's, the flush's commit point)."""
    sent: list[dict[str, Any]] = []

    def count(params: dict[str, Any], **_: Any) -> None:
        if params["Key"]["pk"]["S"].startswith("CRED#"):
            sent.append(dict(params))

    services.last_use_dynamodb.meta.events.register(
        "before-parameter-build.dynamodb.UpdateItem", count
    )
    return sent


def use(api: Api, key: dict[str, Any], times: int = 1) -> None:
    for _ in range(times):
        assert api.call("GET", WHOAMI, key["key"]).status == 200


def usage(api: Api, owner: str, key_id: str, **query: str) -> dict[str, Any]:
    text = "&".join(f"{name}={value}" for name, value in query.items())
    answer = api.call("GET", f"{KEYS}/{key_id}/usage?{text}", owner)
    assert answer.status == 200, answer.body
    return dict(answer.json)


def counts(report: dict[str, Any]) -> dict[str, int]:
    return {b["start"]: b["requests"] for b in report["buckets"] if b["requests"]}


def test_requests_are_counted_per_hour_once_the_next_window_writes_them(
    api: Api, alice: str, clock: FrozenClock, flushes: list[dict[str, Any]]
) -> None:
    clock.at = MORNING
    key = api.create_key(alice)
    use(api, key, 4)  # the first writes itself; three wait for the next window
    clock.advance(minutes=59, seconds=59)
    use(api, key, 2)  # 10:59:59: writes the three, keeps one
    clock.advance(seconds=1)
    use(api, key)  # 11:00:00, a new hour (and window): writes 10:59:59's second request

    report = usage(api, alice, key["id"], granularity="hour", **{"from": "2026-11-24T09:00:00Z"},
                   to="2026-11-24T12:00:00Z")

    assert counts(report) == {"2026-11-24T10:00:00Z": 6, "2026-11-24T11:00:00Z": 1}
    assert [b["start"] for b in report["buckets"]] == [
        "2026-11-24T09:00:00Z", "2026-11-24T10:00:00Z", "2026-11-24T11:00:00Z"
    ]
    assert report["keyId"] == key["id"] and report["granularity"] == "hour"
    assert report["complete"] is False  # 11:00 still receives counts
    assert len(flushes) == 3


def test_days_sum_their_utc_hours_and_split_at_midnight(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    clock.at = datetime(2026, 11, 24, 23, 55, tzinfo=UTC)
    key = api.create_key(alice)
    use(api, key, 3)
    clock.at = datetime(2026, 11, 25, 0, 0, tzinfo=UTC)
    use(api, key, 2)
    clock.at = datetime(2026, 11, 25, 0, 5, tzinfo=UTC)
    use(api, key)

    report = usage(api, alice, key["id"], granularity="day")

    assert counts(report) == {"2026-11-24T00:00:00Z": 3, "2026-11-25T00:00:00Z": 3}
    assert len(report["buckets"]) == 7  # the default: the last 7 days, today included
    assert report["buckets"][-1]["start"] == "2026-11-25T00:00:00Z"


def test_the_lag_is_one_window_and_an_hour_is_final_one_window_after_its_end(
    api: Api, alice: str, clock: FrozenClock, services: Services
) -> None:
    clock.at = MORNING
    key = api.create_key(alice)
    use(api, key, 3)
    hour = {"granularity": "hour", "from": "2026-11-24T10:00:00Z", "to": "2026-11-24T11:00:00Z"}

    seen_now = counts(usage(api, alice, key["id"], **hour))
    clock.advance(minutes=5)
    use(api, key)
    seen_next_window = counts(usage(api, alice, key["id"], **hour))
    clock.at = datetime(2026, 11, 24, 11, 5, tzinfo=UTC)
    final = usage(api, alice, key["id"], **hour)

    assert seen_now == {"2026-11-24T10:00:00Z": 1}  # the first request of the window
    assert seen_next_window == {"2026-11-24T10:00:00Z": 4}
    assert final["complete"] is True
    assert services.settings.usage_flush_seconds == 300


def test_counts_an_idle_container_kept_past_the_window_after_their_hour_are_dropped(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    clock.at = datetime(2026, 11, 24, 10, 58, tzinfo=UTC)
    key = api.create_key(alice)
    use(api, key, 3)  # one written, two kept
    clock.at = datetime(2026, 11, 24, 11, 6, tzinfo=UTC)  # 10:00 is final since 11:05
    use(api, key)

    report = usage(api, alice, key["id"], granularity="hour", **{"from": "2026-11-24T10:00:00Z"},
                   to="2026-11-24T12:00:00Z")

    assert counts(report) == {"2026-11-24T10:00:00Z": 1, "2026-11-24T11:00:00Z": 1}


def test_two_containers_never_count_more_than_the_requests_even_when_an_answer_is_lost(
    api: Api, alice: str, clock: FrozenClock, services: Services,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock.at = MORNING
    key = api.create_key(alice)
    record = services.key_store.find_by_hash(
        services.key_store.get_with_ciphertext("usr_alice", key["id"])[0].key_hash  # type: ignore[index]
    )
    assert record is not None
    first, second = another_container(services), another_container(services)
    real = services.last_use_dynamodb.update_item
    lost: list[bool] = []

    def applied_but_answer_lost(**params: Any) -> Any:
        real(**params)
        if not lost:
            lost.append(True)
            raise ReadTimeoutError(endpoint_url="https://dynamodb")
        return None

    monkeypatch.setattr(services.last_use_dynamodb, "update_item", applied_but_answer_lost)
    for _ in range(5):
        first.last_use.record(record, clock.now())  # the first send commits, its answer lost
        second.last_use.record(record, clock.now())
    clock.advance(minutes=5)
    first.last_use.record(record, clock.now())  # sends the lost flush again: already there
    second.last_use.record(record, clock.now())
    clock.advance(minutes=5)
    first.last_use.record(record, clock.now())
    second.last_use.record(record, clock.now())

    report = usage(api, alice, key["id"], granularity="hour", **{"from": "2026-11-24T10:00:00Z"},
                   to="2026-11-24T11:00:00Z")

    # 14 requests, all written (each window's first request writes itself); the lost
    # flush, sent again, did not add a second time.
    assert counts(report) == {"2026-11-24T10:00:00Z": 14}
    assert lost == [True]


def test_a_delegated_token_counts_on_its_root_key_through_the_resolver(
    services: Services, clock: FrozenClock, api: Api, alice: str
) -> None:
    """A judge that returns a root key record gets it recorded like the key itself."""
    clock.at = MORNING
    key = api.create_key(alice)
    owned = services.key_store.get_with_ciphertext("usr_alice", key["id"])
    assert owned is not None
    root = owned[0]
    resolver = Resolver(
        services.key_store, services.workspace_store, clock, services.verify_token,
        services.last_use,
    )

    def judged(*_: Any) -> Any:
        return Principal("usr_alice", "delegated", frozenset({"memory:read"})), None, root

    resolver._resolve_jwt = judged  # type: ignore[method-assign]
    for _ in range(2):
        assert isinstance(resolver.resolve("Bearer a.b.c", None), Principal)
    clock.advance(minutes=5)
    resolver.resolve("Bearer a.b.c", None)

    assert counts(usage(api, alice, key["id"], granularity="hour"))[
        "2026-11-24T10:00:00Z"
    ] == 3


@pytest.mark.parametrize(
    ("query", "detail"),
    [
        ("granularity=minute", "granularity must be hour or day."),
        ("granularity=hour&from=2026-10-01T00:00:00Z&to=2026-11-02T00:00:00Z", "At most 31"),
        ("granularity=day&from=2025-01-01T00:00:00Z&to=2026-11-02T00:00:00Z", "At most 400"),
        ("from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z", "from must be before to."),
        ("from=yesterday", "from must be an RFC 3339 time"),
    ],
)
def test_a_range_that_is_not_served_is_invalid_parameter(
    api: Api, alice: str, query: str, detail: str
) -> None:
    key = api.create_key(alice)

    answer = api.call("GET", f"{KEYS}/{key['id']}/usage?{query}", alice)

    assert answer.status == 400 and answer.code == "invalid_parameter"
    assert answer.json["detail"].startswith(detail)


def test_only_the_owner_reads_a_keys_usage(api: Api, alice: str, bob: str) -> None:
    key = api.create_key(alice)

    answer = api.call("GET", f"{KEYS}/{key['id']}/usage", bob)

    assert answer.status == 404 and answer.code == "not_found"


def test_a_days_range_of_400_days_answers_every_day(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    report = usage(api, alice, key["id"], granularity="day", **{"from": "2025-10-01T00:00:00Z"},
                   to="2026-11-05T00:00:00Z")

    assert len(report["buckets"]) == 400

