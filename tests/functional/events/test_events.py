"""Audit events: each change recorded once with its actor and origin, listed by
`GET /v1/auth/events`, retained 400 days, and put on the stage's EventBridge bus."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from chalice.local import LambdaEventConverter

from chalicelib.clock import FrozenClock, parse_rfc3339
from chalicelib.runtime import Services
from tests.functional import failures
from tests.functional.conftest import Api

KEYS = "/v1/auth/api-keys"
EVENTS = "/v1/auth/events"
UA = {"User-Agent": "memory-sdk-test/1.0"}


def events(api: Api, credential: str, query: str = "") -> list[dict[str, Any]]:
    answer = api.call("GET", EVENTS + query, credential)
    assert answer.status == 200, answer.body
    return list(answer.json["events"])


@pytest.fixture
def bus(services: Services) -> Callable[[], list[dict[str, Any]]]:
    """What a team's EventBridge rule on the stage's bus receives (through an SQS queue)."""
    import boto3

    sqs = boto3.client("sqs", region_name="us-east-1")
    queue = sqs.create_queue(QueueName="audit")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    bus_name = services.settings.event_bus_name
    client = services.events_client
    client.put_rule(
        Name="all-auth-events",
        EventBusName=bus_name,
        EventPattern=json.dumps({"source": ["memory-auth"]}),
    )
    client.put_targets(
        Rule="all-auth-events", EventBusName=bus_name, Targets=[{"Id": "q", "Arn": arn}]
    )

    def received() -> list[dict[str, Any]]:
        found = []
        while True:
            batch = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10).get("Messages", [])
            if not batch:
                return found
            found.extend(json.loads(m["Body"]) for m in batch)

    return received


def test_a_full_lifecycle_appears_once_per_action_newest_first(
    api: Api, alice: str, bob: str, services: Services
) -> None:
    # `bob` signs in first: only a user who exists can be added to a workspace.
    sent = {"headers": UA}
    ws = api.call("POST", "/v1/workspaces", alice, body={"name": "Team"}, **sent).json["id"]
    api.call("PUT", f"/v1/workspaces/{ws}/members/usr_bob", alice, **sent)
    key = api.call(
        "POST", KEYS, alice, body={"label": "ci", "category": "workspace", "workspaceId": ws},
        **sent,
    ).json
    api.call("GET", f"{KEYS}/{key['id']}/reveal", alice, **sent)
    api.call("PATCH", f"{KEYS}/{key['id']}", alice, body={"label": "ci-2"}, **sent)
    new = api.call(
        "POST", f"{KEYS}/{key['id']}/rotate", alice, body={"gracePeriodSeconds": 60}, **sent
    ).json
    api.call("DELETE", f"{KEYS}/{key['id']}", alice, **sent)
    api.call("DELETE", f"/v1/workspaces/{ws}/members/usr_bob", alice, **sent)

    answer = api.call("GET", EVENTS, alice)

    listed = answer.json["events"]
    assert [e["type"] for e in listed] == [
        "member.removed", "key.revoked", "key.rotated", "key.updated", "key.revealed",
        "key.created", "member.added", "workspace.created",
    ]
    assert answer.json["nextCursor"] is None
    for event in listed:
        assert event["id"].startswith("evt_")
        assert event["actor"] == {"userId": "usr_alice", "credential": "user_token", "keyId": None}
        assert event["sourceIp"] == "127.0.0.1"
        assert event["userAgent"] == "memory-sdk-test/1.0"
        assert event["workspaceId"] == ws
        assert parse_rfc3339(event["occurredAt"]) == services.clock.now()
    by_type = {e["type"]: e for e in listed}
    assert by_type["key.created"]["keyId"] == key["id"]
    assert by_type["key.created"]["data"]["label"] == "ci"
    assert by_type["key.rotated"]["data"]["successorId"] == new["id"]
    assert by_type["key.rotated"]["data"]["gracePeriodSeconds"] == 60
    assert by_type["key.updated"]["data"]["changed"] == ["label"]
    assert by_type["member.added"]["data"]["userId"] == "usr_bob"
    body = answer.body.decode()
    for secret in (key["key"], new["key"], alice):
        assert secret not in body
    stored = services.dynamodb.scan(TableName=services.settings.table_name)["Items"]
    assert not any(key["key"] in json.dumps(item, default=str) for item in stored)


def test_an_admin_keys_actions_name_the_key_as_actor(api: Api, alice: str) -> None:
    admin = api.create_key(alice)

    created = api.call("POST", KEYS, admin["key"], body={"label": "by key"}).json

    (event,) = events(api, alice, f"?keyId={created['id']}")
    assert event["actor"] == {"userId": "usr_alice", "credential": "api_key", "keyId": admin["id"]}


def test_the_source_address_is_the_requests_own(
    api: Api, alice: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(LambdaEventConverter, "LOCAL_SOURCE_IP", "198.51.100.23")

    api.create_key(alice)

    assert events(api, alice)[0]["sourceIp"] == "198.51.100.23"


def test_filters_by_type_and_key_and_pages_with_a_cursor(api: Api, alice: str) -> None:
    first = api.create_key(alice)
    second = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{first['id']}", alice)

    revoked = events(api, alice, "?type=key.revoked")
    of_second = events(api, alice, f"?keyId={second['id']}")
    page = api.call("GET", EVENTS + "?limit=2", alice).json
    rest = api.call("GET", EVENTS + f"?limit=2&cursor={page['nextCursor']}", alice).json

    assert [e["keyId"] for e in revoked] == [first["id"]]
    assert [e["type"] for e in of_second] == ["key.created"]
    assert [e["type"] for e in page["events"]] == ["key.revoked", "key.created"]
    assert [e["keyId"] for e in rest["events"]] == [first["id"]]
    assert rest["nextCursor"] is None


def test_a_workspace_named_lists_only_that_workspaces_events(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    api.create_key(alice)
    api.create_key(alice, category="workspace", workspaceId=ws)

    listed = events(api, alice, f"?workspace_id={ws}")

    assert [e["type"] for e in listed] == ["key.created", "workspace.created"]
    assert {e["workspaceId"] for e in listed} == {ws}


def test_nobody_sees_another_users_events(api: Api, alice: str, bob: str) -> None:
    api.create_key(alice)
    api.workspace(alice)

    assert events(api, bob) == []


def test_a_workspace_key_may_not_read_events(api: Api, alice: str) -> None:
    ws = api.workspace(alice)
    key = api.create_key(alice, category="workspace", workspaceId=ws)

    answer = api.call("GET", EVENTS, key["key"])

    assert (answer.status, answer.code) == (403, "insufficient_scope")


@pytest.mark.parametrize(
    "query", ["?type=key.exploded", "?keyId=nope", "?cursor=xyz", "?limit=0", "?limit=101", "?x=1"]
)
def test_bad_parameters_are_400(api: Api, alice: str, query: str) -> None:
    answer = api.call("GET", EVENTS + query, alice)

    assert answer.status == 400


def test_events_are_retained_400_days(api: Api, alice: str, clock: FrozenClock) -> None:
    key = api.create_key(alice)
    items = api.services.dynamodb.scan(TableName=api.services.settings.table_name)["Items"]
    (stored,) = [i for i in items if i["sk"]["S"].startswith("EVT#")]
    assert int(stored["ttl"]["N"]) == int((clock.now() + timedelta(days=400)).timestamp())
    clock.advance(days=400, seconds=-1)
    assert [e["keyId"] for e in events(api, api.token("usr_alice"))] == [key["id"]]

    clock.advance(seconds=1)

    assert events(api, api.token("usr_alice")) == []


def test_each_event_is_put_on_the_stages_bus(
    api: Api, alice: str, bus: Callable[[], list[dict[str, Any]]]
) -> None:
    key = api.create_key(alice)
    api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    received = bus()

    assert [(m["source"], m["detail-type"]) for m in received] == [
        ("memory-auth", "key.created"),
        ("memory-auth", "key.revoked"),
    ]
    listed = {e["id"]: e for e in events(api, alice)}
    for message in received:
        assert message["detail"] == listed[message["detail"]["id"]]
        assert key["key"] not in json.dumps(message)


@pytest.mark.parametrize(
    "failure",
    [failures.broken, failures.throttled],
    ids=["unreachable", "throttled"],
)
def test_a_failed_put_never_fails_the_request_nor_loses_the_stored_event(
    api: Api, alice: str, services: Services, monkeypatch: pytest.MonkeyPatch,
    failure: Callable[..., Any],
) -> None:
    monkeypatch.setattr(services.events_client, "put_events", failure)

    answer = api.call("POST", KEYS, alice, body={"label": "x"})

    assert answer.status == 201
    assert [e["keyId"] for e in events(api, alice)] == [answer.json["id"]]


def test_entries_the_bus_refuses_are_logged_and_the_request_succeeds(
    api: Api, alice: str, services: Services, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def refuse(**request: Any) -> dict[str, Any]:
        return {"FailedEntryCount": 1, "Entries": [{"ErrorCode": "InternalFailure"}]}

    monkeypatch.setattr(services.events_client, "put_events", refuse)

    with caplog.at_level(logging.INFO, logger="memory-auth"):
        answer = api.call("POST", KEYS, alice, body={"label": "x"})

    assert answer.status == 201
    (warning,) = [r for r in caplog.records if r.getMessage() == "event not put on the bus"]
    assert warning.type == "key.created"  # type: ignore[attr-defined]


def test_a_change_that_fails_stores_no_event(
    api: Api, alice: str, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(services.dynamodb, "update_item", failures.throttled)

    answer = api.call("DELETE", f"{KEYS}/{key['id']}", alice)

    monkeypatch.undo()
    assert answer.status == 503
    assert [e["type"] for e in events(api, alice)] == ["key.created"]
    assert api.call("GET", "/v1/auth/whoami", key["key"]).status == 200


def test_no_plaintext_is_revealed_without_its_stored_event(
    api: Api, alice: str, services: Services, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = api.create_key(alice)
    monkeypatch.setattr(services.dynamodb, "put_item", failures.throttled)

    answer = api.call("GET", f"{KEYS}/{key['id']}/reveal", alice)

    assert answer.status == 503
    assert key["key"] not in answer.body.decode()
