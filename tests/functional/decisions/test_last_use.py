"""`lastUsedAt`: written by the request path at most once per key and 5-minute window, on its
own short-timeout client, never failing the request."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from chalicelib.clock import FrozenClock, parse_rfc3339
from chalicelib.keys.model import last_used_window
from chalicelib.runtime import Services
from tests.fixtures.events import bearer, request_event
from tests.functional import failures
from tests.functional.conftest import Api, another_container

KEYS = "/v1/auth/api-keys"
WHOAMI = "/v1/auth/whoami"


@pytest.fixture
def writes(services: Services) -> list[dict[str, Any]]:
    """Every usage flush sent to DynamoDB, by any container: its first write, to the
    credential item (lastUsedAt and the day's count), the flush's commit point."""
    sent: list[dict[str, Any]] = []

    def count(params: dict[str, Any], **_: Any) -> None:
        if params["Key"]["pk"]["S"].startswith("CRED#"):
            sent.append(dict(params))

    events = services.last_use_dynamodb.meta.events
    events.register("before-parameter-build.dynamodb.UpdateItem", count)
    return sent


def credential_update(write: dict[str, Any]) -> dict[str, Any]:
    """The write of a usage flush to the credential item (lastUsedAt)."""
    return write



def last_used(api: Api, credential: str, key_id: str) -> str | None:
    answer = api.call("GET", f"{KEYS}/{key_id}", credential)
    assert answer.status == 200
    value = answer.json["lastUsedAt"]
    return None if value is None else str(value)


def test_a_new_key_has_no_last_use(api: Api, alice: str) -> None:
    key = api.create_key(alice)

    assert key["lastUsedAt"] is None
    assert last_used(api, alice, key["id"]) is None


def test_a_use_records_last_used_at_at_five_minute_precision(
    api: Api, alice: str, clock: FrozenClock
) -> None:
    key = api.create_key(alice)
    clock.advance(minutes=7, seconds=13)

    assert api.call("GET", WHOAMI, key["key"]).status == 200

    recorded = last_used(api, alice, key["id"])
    assert recorded is not None
    assert parse_rfc3339(recorded) == last_used_window(clock.now())
    assert parse_rfc3339(recorded).minute % 5 == 0  # type: ignore[union-attr]
    assert api.call("GET", KEYS, alice).json["keys"][0]["lastUsedAt"] == recorded


def test_many_uses_in_one_window_make_one_write_and_the_next_window_one_more(
    api: Api, alice: str, clock: FrozenClock, writes: list[dict[str, Any]]
) -> None:
    key = api.create_key(alice)
    clock.at = last_used_window(clock.now())

    for _ in range(20):
        assert api.call("GET", WHOAMI, key["key"]).status == 200
        clock.advance(seconds=10)
    first = last_used(api, alice, key["id"])
    clock.advance(minutes=5)
    for _ in range(5):
        api.call("GET", WHOAMI, key["key"])

    assert len(writes) == 2
    assert last_used(api, alice, key["id"]) != first


def test_two_containers_each_write_their_own_counts_once_per_window(
    api: Api, alice: str, services: Services, writes: list[dict[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    key = api.create_key(alice)
    owned = services.key_store.get_with_ciphertext("usr_alice", key["id"])
    assert owned is not None
    stale = services.key_store.find_by_hash(owned[0].key_hash)
    assert stale is not None and stale.last_used_at is None
    containers = [another_container(services), another_container(services)]

    with caplog.at_level(logging.INFO, logger="memory-auth.last-use"):
        for container in containers:
            container.last_use.record(stale, services.clock.now())
            container.last_use.record(stale, services.clock.now())

    outcomes = [r.outcome for r in caplog.records if hasattr(r, "outcome")]  # type: ignore[attr-defined]
    assert outcomes == ["written", "written"]
    assert len(writes) == 2
    assert "#lastUsedAt = :window" in credential_update(writes[0])["UpdateExpression"]


def test_the_data_plane_authorizer_records_last_use_too(
    api: Api, alice: str, authorize: Callable[[dict[str, Any]], dict[str, Any]],
    writes: list[dict[str, Any]],
) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)

    for _ in range(3):
        answer = authorize(request_event("/v1/memory/items", bearer(key["key"]), ws))
        assert answer["policyDocument"]["Statement"][0]["Effect"] == "Allow"

    assert last_used(api, alice, key["id"]) is not None
    assert len(writes) == 1
    assert set(credential_update(writes[0])["Key"]) == {"pk", "sk"}


@pytest.mark.parametrize(
    "failure",
    [failures.broken, failures.throttled, failures.failing_with("AccessDeniedException")],
    ids=["unreachable", "throttled", "denied"],
)
def test_a_failed_write_never_fails_the_request(
    api: Api, alice: str, services: Services, monkeypatch: pytest.MonkeyPatch,
    failure: Callable[..., Any],
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(services.last_use_dynamodb, "update_item", failure)

    answer = api.call("GET", WHOAMI, key["key"])

    assert answer.status == 200
    assert last_used(api, alice, key["id"]) is None


def test_refused_requests_record_no_use(
    api: Api, alice: str, bob: str, writes: list[dict[str, Any]]
) -> None:
    key = api.create_key(alice, allowedCidrs=["10.0.0.0/8"])
    other = api.create_key(alice)
    bobs_workspace = api.workspace(bob)

    assert api.call("GET", WHOAMI, key["key"]).code == "ip_not_allowed"
    assert api.call("GET", WHOAMI, other["key"], workspace=bobs_workspace).code == "not_a_member"

    assert writes == []


def test_the_write_has_its_own_client_with_a_short_timeout_and_no_retry(
    services: Services,
) -> None:
    config = services.last_use_dynamodb.meta.config

    assert config.connect_timeout <= 0.5 and config.read_timeout <= 0.5
    assert config.retries["total_max_attempts"] == 1
    assert services.last_use_dynamodb is not services.dynamodb
