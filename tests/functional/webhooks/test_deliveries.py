"""Deliveries: every event of the workspace, signed, retried, recorded; never lost."""

from __future__ import annotations

import json
import logging
from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError

from chalicelib import runtime
from chalicelib.clock import FrozenClock
from chalicelib.runtime import Services
from chalicelib.webhooks.delivery import attempt_message
from tests.functional.conftest import Api, another_container
from tests.functional.webhooks.conftest import (
    Queue,
    Receiver,
    consumer_of,
    subscribe,
    verify,
)


def bound_key(api: Api, owner: str, workspace: str) -> dict[str, Any]:
    return api.create_key(owner, category="workspace", workspaceId=workspace)


def deliveries(api: Api, owner: str, workspace: str, webhook: str) -> list[dict[str, Any]]:
    answer = api.call("GET", f"/v1/workspaces/{workspace}/webhooks/{webhook}/deliveries", owner)
    assert answer.status == 200, answer.body
    return list(answer.json["deliveries"])


def test_an_event_of_the_workspace_is_delivered_signed_once_per_subscription(
    api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue
) -> None:
    first = subscribe(api, alice, workspace)
    second = subscribe(api, alice, workspace, url="https://second.example.net/in")
    queue.run()
    receiver.posted.clear()  # the second subscription's creation reached the first

    key = bound_key(api, alice, workspace)
    queue.run()
    queue.run()  # a second run finds nothing more to send

    posted = {p.url: p for p in receiver.posted}
    assert len(receiver.posted) == 2
    assert set(posted) == {first["url"], second["url"]}
    one = posted[first["url"]]
    assert one.json["type"] == "key.created"
    assert one.json["data"]["keyId"] == key["id"]
    assert set(one.json) == {"type", "timestamp", "data"}
    assert one.headers["webhook-id"] == one.json["data"]["id"]
    assert verify(first["secret"], one)
    assert not verify(second["secret"], one)
    assert verify(second["secret"], posted[second["url"]])


def test_the_owners_admin_key_events_reach_the_subscriptions_of_the_workspaces_it_owns(
    api: Api, alice: str, bob: str, workspace: str, receiver: Receiver, queue: Queue
) -> None:
    subscribe(api, alice, workspace, events=["key.created"])
    api.add_member(alice, workspace, "usr_bob")

    own = api.create_key(alice)  # an admin key: bound to no workspace
    api.create_key(bob)  # a member's admin key is not the workspace's
    queue.run()

    assert [p.json["data"]["keyId"] for p in receiver.posted] == [own["id"]]


def test_a_subscription_gets_only_the_event_types_it_names(
    api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue
) -> None:
    subscribe(api, alice, workspace, events=["key.revoked"])
    key = bound_key(api, alice, workspace)
    api.call("DELETE", f"/v1/auth/api-keys/{key['id']}", alice)

    queue.run()

    assert [p.json["type"] for p in receiver.posted] == ["key.revoked"]


def test_an_event_older_than_the_subscription_is_not_delivered_to_it(
    api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue, clock: FrozenClock
) -> None:
    before = bound_key(api, alice, workspace)  # queued, not yet fanned out
    clock.advance(seconds=2)
    subscribe(api, alice, workspace, events=["key.created"])
    after = bound_key(api, alice, workspace)

    queue.run()

    assert [p.json["data"]["keyId"] for p in receiver.posted] == [after["id"]]
    assert before["id"] != after["id"]


def test_an_event_of_the_second_the_subscription_was_made_in_is_delivered(
    api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue
) -> None:
    subscribe(api, alice, workspace, events=["key.created"])
    key = bound_key(api, alice, workspace)  # the frozen clock: the same second

    queue.run()

    assert [p.json["data"]["keyId"] for p in receiver.posted] == [key["id"]]


def test_a_500_is_retried_and_the_200_delivers_it_with_two_attempts(
    api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    receiver.script = [500, 200]

    bound_key(api, alice, workspace)
    queue.run()

    (delivery,) = deliveries(api, alice, workspace, made["id"])
    assert len(receiver.posted) == 2
    assert receiver.posted[0].headers["webhook-id"] == receiver.posted[1].headers["webhook-id"]
    assert delivery["state"] == "delivered"
    assert delivery["attempts"] == 2
    assert delivery["lastStatusCode"] == 200
    assert delivery["nextAttemptAt"] is None


def test_a_failing_delivery_is_retried_on_the_schedule_then_failed(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver,
    queue: Queue, clock: FrozenClock,
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    receiver.script = [503] * 8
    bound_key(api, alice, workspace)
    queue.run()  # the first attempt, and the first retry (made due at once here)
    waits = []
    for number in range(3, 9):
        (listed,) = deliveries(api, alice, workspace, made["id"])
        due = listed["nextAttemptAt"]
        waits.append(due)
        clock.advance(hours=11)  # past any delay of the schedule
        webhook, delivery = _the_delivery(services, workspace, made["id"])
        services.deliverer.handle(attempt_message(delivery, number))

    (delivery,) = deliveries(api, alice, workspace, made["id"])
    assert len(receiver.posted) == 8
    assert delivery["state"] == "failed"
    assert delivery["attempts"] == 8
    assert delivery["lastStatusCode"] == 503
    assert all(waits)


def _the_delivery(services: Services, workspace: str, webhook_id: str) -> Any:
    webhook = services.webhooks.get(workspace, webhook_id)
    (delivery,) = list(services.webhooks.deliveries(workspace, webhook_id))
    return webhook, delivery


def test_the_retry_delays_follow_the_schedule(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver,
    queue: Queue, clock: FrozenClock,
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    receiver.script = [500, 500]
    bound_key(api, alice, workspace)
    queue.run()

    _, delivery = _the_delivery(services, workspace, made["id"])
    wait = delivery.next_attempt_at - delivery.last_attempt_at

    assert delivery.attempts == 2
    assert timedelta(minutes=4, seconds=30) <= wait <= timedelta(minutes=5, seconds=30)


def test_a_subscription_failing_for_three_days_is_disabled_with_an_event(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver,
    queue: Queue, clock: FrozenClock,
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    receiver.script = [None] * 20
    bound_key(api, alice, workspace)
    queue.run()
    for number in range(3, 9):
        clock.advance(hours=13)  # 78 hours of failing, all told
        _, delivery = _the_delivery(services, workspace, made["id"])
        services.deliverer.handle(attempt_message(delivery, number))

    got = api.call("GET", f"/v1/workspaces/{workspace}/webhooks/{made['id']}", alice)
    events = api.call("GET", f"/v1/auth/events?workspace_id={workspace}&type=webhook.disabled",
                      alice)

    assert got.json["enabled"] is False
    assert [e["type"] for e in events.json["events"]] == ["webhook.disabled"]
    assert events.json["events"][0]["actor"] == {"system": "webhooks"}


def test_the_retry_endpoint_makes_a_failed_delivery_due_again(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver,
    queue: Queue, clock: FrozenClock,
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    receiver.script = [500] * 8
    bound_key(api, alice, workspace)
    queue.run()
    for number in range(3, 9):
        clock.advance(hours=11)
        _, delivery = _the_delivery(services, workspace, made["id"])
        services.deliverer.handle(attempt_message(delivery, number))
    (failed,) = deliveries(api, alice, workspace, made["id"])

    retried = api.call(
        "POST",
        f"/v1/workspaces/{workspace}/webhooks/{made['id']}/deliveries/{failed['id']}/retry",
        alice,
    )
    queue.run()
    (after,) = deliveries(api, alice, workspace, made["id"])

    assert failed["state"] == "failed"
    assert retried.status == 202
    assert retried.json["state"] == "pending"
    assert after["state"] == "delivered"
    assert after["attempts"] == 9


def test_an_unknown_delivery_is_404(api: Api, alice: str, workspace: str) -> None:
    made = subscribe(api, alice, workspace)
    base = f"/v1/workspaces/{workspace}/webhooks/{made['id']}/deliveries"

    unknown = api.call("POST", f"{base}/dlv_01JQ0000000000000000000000/retry", alice)
    junk = api.call("POST", f"{base}/nope/retry", alice)

    assert (unknown.status, unknown.code) == (404, "not_found")
    assert (junk.status, junk.code) == (404, "not_found")


def test_deliveries_list_newest_first_with_a_cursor(
    api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    keys = [bound_key(api, alice, workspace)["id"] for _ in range(3)]
    queue.run()
    base = f"/v1/workspaces/{workspace}/webhooks/{made['id']}/deliveries"

    first = api.call("GET", f"{base}?limit=2", alice)
    second = api.call("GET", f"{base}?limit=2&cursor={first.json['nextCursor']}", alice)

    listed = [*first.json["deliveries"], *second.json["deliveries"]]
    assert [d["eventType"] for d in listed] == ["key.created"] * 3
    assert [p.json["data"]["keyId"] for p in receiver.posted] == keys
    assert [d["eventId"] for d in listed] == sorted((d["eventId"] for d in listed), reverse=True)
    assert second.json["nextCursor"] is None


def test_a_queue_outage_loses_nothing_the_event_is_delivered_once_it_clears(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver,
    queue: Queue, monkeypatch: Any,
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    queue.run()

    def down(**_: Any) -> Any:
        raise EndpointConnectionError(endpoint_url="https://sqs.us-east-1.amazonaws.com")

    with monkeypatch.context() as patched:
        patched.setattr(services.sqs, "send_message_batch", down)
        key = bound_key(api, alice, workspace)  # 201: the change stands
        queue.run_once()
    queue.run()

    (delivery,) = deliveries(api, alice, workspace, made["id"])
    assert [p.json["data"]["keyId"] for p in receiver.posted] == [key["id"]]
    assert delivery["state"] == "delivered"


def test_a_store_outage_in_the_worker_loses_nothing_the_event_is_delivered_once_it_clears(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver,
    queue: Queue, monkeypatch: Any,
) -> None:
    subscribe(api, alice, workspace, events=["key.created"])
    queue.run()
    key = bound_key(api, alice, workspace)

    def down(**_: Any) -> Any:
        raise ClientError(
            {"Error": {"Code": "InternalServerError", "Message": "down"}}, "Query"
        )

    with monkeypatch.context() as patched:
        patched.setattr(services.dynamodb, "query", down)
        failed = queue.run_once()
    queue.run()

    assert len(failed["batchItemFailures"]) == 1
    assert [p.json["data"]["keyId"] for p in receiver.posted] == [key["id"]]


def test_a_delivery_never_fails_the_change_that_made_it(
    services: Services, api: Api, alice: str, workspace: str, monkeypatch: Any
) -> None:
    subscribe(api, alice, workspace)

    def down(*_: Any, **__: Any) -> Any:
        raise RuntimeError("the queue and its backlog are both down")

    monkeypatch.setattr(services.work_queue, "send", down)
    answer = api.call(
        "POST", "/v1/auth/api-keys", alice,
        body={"label": "k", "category": "workspace", "workspaceId": workspace},
    )
    listed = api.call("GET", "/v1/auth/api-keys", alice)

    assert answer.status == 201
    assert [k["id"] for k in listed.json["keys"]] == [answer.json["id"]]


def test_the_consumer_in_a_container_of_its_own_finds_its_queue_and_delivers(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue
) -> None:
    subscribe(api, alice, workspace, events=["key.created"])
    key = bound_key(api, alice, workspace)
    consumer = another_container(services)  # nothing of the API handler's is cached there
    vars(consumer)["deliverer"] = consumer_of(consumer, receiver)

    runtime.use(consumer)
    try:
        queue.run()
    finally:
        runtime.use(services)

    assert [p.json["data"]["keyId"] for p in receiver.posted] == [key["id"]]


def test_the_stored_subscription_holds_its_secret_sealed_and_deliveries_still_verify(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    rotated = api.call(
        "POST", f"/v1/workspaces/{workspace}/webhooks/{made['id']}/rotate-secret", alice
    )
    assert rotated.status == 200, rotated.body
    queue.run()

    from chalicelib import items

    stored = services.dynamodb.get_item(
        TableName=services.settings.table_name, Key=items.webhook(workspace, made["id"])
    )["Item"]
    text = repr(stored).encode() + b"".join(
        v["B"] for v in stored.values() if "B" in v
    )
    assert b"whsec" + b"_" not in text
    for shown in (made["secret"], rotated.json["secret"]):
        assert shown.encode() not in text
        assert shown.removeprefix("whsec" "_").encode() not in text
    bound_key(api, alice, workspace)
    queue.run()
    (posted,) = receiver.posted
    assert verify(rotated.json["secret"], posted)
    assert verify(made["secret"], posted)  # the overlap: the old secret signs beside it


def test_a_kms_outage_at_delivery_sends_nothing_and_leaves_the_delivery_pending_until_it_clears(
    services: Services, api: Api, alice: str, workspace: str, receiver: Receiver,
    queue: Queue, monkeypatch: Any,
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    queue.run()
    key = bound_key(api, alice, workspace)

    def down(**_: Any) -> Any:
        raise EndpointConnectionError(endpoint_url="https://kms.example")

    with monkeypatch.context() as patched:
        patched.setattr(services.kms, "decrypt", down)
        queue.run_once()  # the event fans out to its delivery
        failed = queue.run_once()  # the attempt cannot sign it
    (pending,) = deliveries(api, alice, workspace, made["id"])

    assert len(failed["batchItemFailures"]) == 1
    assert receiver.posted == []
    assert pending["state"] == "pending"
    assert pending["attempts"] == 0
    queue.run()
    assert [p.json["data"]["keyId"] for p in receiver.posted] == [key["id"]]
    (delivery,) = deliveries(api, alice, workspace, made["id"])
    assert delivery["state"] == "delivered"


def test_each_attempt_recorded_is_logged_with_its_ids_and_outcome_never_its_url(
    api: Api, alice: str, workspace: str, receiver: Receiver, queue: Queue,
    caplog: pytest.LogCaptureFixture,
) -> None:
    made = subscribe(api, alice, workspace, events=["key.created"])
    receiver.script = [500, 200]

    with caplog.at_level(logging.INFO, logger="memory-auth"):
        bound_key(api, alice, workspace)
        queue.run()

    (delivery,) = deliveries(api, alice, workspace, made["id"])
    lines = [r for r in caplog.records if r.getMessage() == "webhook attempt recorded"]
    assert [(r.attempt, r.state, r.status) for r in lines] == [  # type: ignore[attr-defined]
        (1, "pending", 500), (2, "delivered", 200)
    ]
    assert {(r.webhook_id, r.event_id) for r in lines} == {  # type: ignore[attr-defined]
        (made["id"], delivery["eventId"])
    }
    assert not any(made["url"] in json.dumps(r.__dict__, default=str) for r in lines)
