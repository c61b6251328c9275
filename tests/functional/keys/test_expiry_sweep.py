"""The hourly expiry sweep, run as its Lambda function on the moved clock: `key.expiring`
once, 7 days ahead; `key.expired` once, when the key's end passes; no table scan."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from chalice.test import Client

from chalicelib import runtime
from chalicelib.clock import FrozenClock
from chalicelib.keys.store import NOTICE_SHARDS, notice_shard
from chalicelib.runtime import Services
from chalicelib.table import SHARDS
from tests.functional.conftest import Api, another_container

KEYS = "/v1/auth/api-keys"

Sweep = Callable[[], dict[str, int]]


@pytest.fixture
def sweep(services: Services) -> Iterator[Sweep]:
    """Runs the sweep as EventBridge's hourly schedule would: its own function and container."""
    from app import app

    own = another_container(services)

    def run() -> dict[str, int]:
        runtime.use(own)
        try:
            event = client.events.generate_cw_event(
                "aws.events", "Scheduled Event", {}, ["arn:aws:events:::rule/hourly"]
            )
            return dict(client.lambda_.invoke("expiry_sweep", event).payload)
        finally:
            runtime.use(services)

    with Client(app) as client:
        yield run


NOTHING_DUE = {
    "expiring": 0, "expired": 0, "already_announced": 0,
    "outbox_delivered": 0, "expired_items_deleted": 0,
}


@pytest.fixture
def calls(services: Services) -> list[tuple[str, dict[str, Any]]]:
    """Every DynamoDB call made while the test runs, with its parameters."""
    made: list[tuple[str, dict[str, Any]]] = []

    def note(params: dict[str, Any], model: Any, **_: Any) -> None:
        made.append((model.name, dict(params)))

    services.dynamodb.meta.events.register("before-parameter-build.dynamodb", note)
    return made


def types_of(api: Api, key_id: str) -> list[str]:
    answer = api.call("GET", f"/v1/auth/events?keyId={key_id}", api.token("usr_alice"))
    return [e["type"] for e in reversed(answer.json["events"])]


def test_a_ninety_day_key_is_announced_seven_days_ahead_then_at_its_end_each_once(
    api: Api, alice: str, clock: FrozenClock, sweep: Sweep
) -> None:
    key = api.create_key(alice)

    clock.advance(days=83, seconds=-1)
    assert sweep() == NOTHING_DUE
    clock.advance(seconds=1)
    assert sweep()["expiring"] == 1
    clock.advance(hours=1)
    assert sweep() == NOTHING_DUE
    clock.advance(days=7, hours=-1, seconds=-1)
    assert sweep()["expired"] == 0
    clock.advance(seconds=1)
    assert sweep()["expired"] == 1
    clock.advance(hours=1)
    assert sweep() == NOTHING_DUE

    assert types_of(api, key["id"]) == ["key.created", "key.expiring", "key.expired"]
    answer = api.call("GET", f"/v1/auth/events?keyId={key['id']}", api.token("usr_alice"))
    expiring = answer.json["events"][1]
    assert expiring["actor"] == {"system": "expiry"}
    assert expiring["data"] == {
        "label": key["label"], "hint": key["hint"], "expiresAt": key["expiresAt"]
    }


def test_a_key_living_seven_days_or_less_gets_no_warning(
    api: Api, alice: str, clock: FrozenClock, sweep: Sweep
) -> None:
    key = api.create_key(alice, expiresInDays=3)

    sweep()
    clock.advance(days=3)
    sweep()

    assert types_of(api, key["id"]) == ["key.created", "key.expired"]


def test_revoked_and_rotated_keys_get_no_notice_and_a_successor_gets_its_own(
    api: Api, alice: str, clock: FrozenClock, sweep: Sweep
) -> None:
    revoked = api.create_key(alice)
    rotated = api.create_key(alice, expiresInDays=30)
    api.call("DELETE", f"{KEYS}/{revoked['id']}", alice)
    successor = api.call(
        "POST", f"{KEYS}/{rotated['id']}/rotate", alice, body={"gracePeriodSeconds": 3600}
    ).json

    clock.advance(days=91)
    sweep()

    assert types_of(api, revoked["id"]) == ["key.created", "key.revoked"]
    assert types_of(api, rotated["id"]) == ["key.created", "key.rotated"]
    # The successor's creation is the old key's key.rotated; its own end is announced (the
    # sweep ran first after it ended, so no late warning comes before it).
    assert types_of(api, successor["id"]) == ["key.expired"]


def test_missed_runs_are_caught_up_by_the_next(
    api: Api, alice: str, clock: FrozenClock, sweep: Sweep
) -> None:
    warned = api.create_key(alice, expiresInDays=10)
    ended = api.create_key(alice, expiresInDays=30)

    clock.advance(days=6)  # the first's warning fell due on day 3; no run since
    assert sweep()["expiring"] == 1
    clock.advance(days=60)  # two months without a run

    assert sweep() == {**NOTHING_DUE, "expired": 2}
    assert types_of(api, warned["id"]) == ["key.created", "key.expiring", "key.expired"]
    assert types_of(api, ended["id"]) == ["key.created", "key.expired"]


def test_a_key_first_seen_expired_by_a_read_is_announced_once_not_again_by_the_sweep(
    api: Api, alice: str, clock: FrozenClock, sweep: Sweep
) -> None:
    key = api.create_key(alice, expiresInDays=2)
    clock.advance(days=3)
    token = api.token("usr_alice")

    assert api.call("GET", f"{KEYS}/{key['id']}", token).json["status"] == "expired"
    api.call("GET", f"{KEYS}/{key['id']}", token)
    result = sweep()

    assert result["expired"] == 0
    assert types_of(api, key["id"]) == ["key.created", "key.expired"]


def test_two_sweeps_at_once_announce_once(
    api: Api, alice: str, clock: FrozenClock, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    clock.advance(days=84)
    first, second = another_container(services), another_container(services)
    read_by_first: list[Any] = []
    read = first.key_store.due_notices

    def reading(shard: str, now: Any) -> Any:
        found = read(shard, now)
        read_by_first.extend(found)
        return found

    monkeypatch.setattr(first.key_store, "due_notices", reading)
    # The second read the index before the first announced: it sees the same notice.
    monkeypatch.setattr(
        second.key_store, "due_notices",
        lambda shard, now: tuple(n for n in read_by_first if notice_shard(n.key_id) == shard),
    )

    results = [first.expiry_sweep.run(), second.expiry_sweep.run()]

    assert [(r.expiring, r.already_announced) for r in results] == [(1, 0), (0, 1)]
    assert [n.key_id for n in read_by_first] == [key["id"]]
    assert types_of(api, key["id"]) == ["key.created", "key.expiring"]


def test_the_sweep_queries_only_the_notice_index_and_never_scans(
    api: Api, alice: str, clock: FrozenClock, sweep: Sweep,
    calls: list[tuple[str, dict[str, Any]]],
) -> None:
    for _ in range(3):
        api.create_key(alice)
    clock.advance(days=84)
    calls.clear()

    sweep()

    writes = ("UpdateItem", "PutItem")
    reads = [(name, params) for name, params in calls if name not in writes]
    assert {name for name, _ in reads} == {"Query"}
    assert {params["IndexName"] for _, params in reads} == {"ExpiryNotices", "Outbox"}
    # One Query per shard of each sparse index (the global stage adds `Expiry`'s).
    assert len(reads) == len(NOTICE_SHARDS) + len(SHARDS)
    # Each notice: its commit point (the notice moves on, with the event in its outbox),
    # the event stored, the outbox cleared.
    assert [name for name, _ in calls].count("UpdateItem") == 3 * 2
    assert [name for name, _ in calls].count("PutItem") == 3


def test_the_expiry_events_reach_the_bus(
    api: Api, alice: str, clock: FrozenClock, sweep: Sweep, services: Services
) -> None:
    import json

    import boto3

    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.create_queue(QueueName="expiry")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    bus = services.settings.event_bus_name
    services.events_client.put_rule(
        Name="expiring", EventBusName=bus,
        EventPattern=json.dumps({"source": ["memory-auth"], "detail-type": ["key.expiring"]}),
    )
    services.events_client.put_targets(
        Rule="expiring", EventBusName=bus, Targets=[{"Id": "q", "Arn": arn}]
    )
    key = api.create_key(alice)
    clock.advance(days=83)

    sweep()

    (message,) = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
    body = json.loads(message["Body"])
    assert body["detail-type"] == "key.expiring"
    assert body["detail"]["keyId"] == key["id"]
