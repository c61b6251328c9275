"""Webhook subscriptions: owner only, a secret shown once, URL and event rules, the limit."""

from __future__ import annotations

import threading

import pytest

from chalicelib.clock import FrozenClock
from chalicelib.runtime import Services
from chalicelib.webhooks.model import Webhook
from chalicelib.webhooks.store import LimitReached
from tests.functional.conftest import Api
from tests.functional.webhooks.conftest import URL, subscribe

SECRET_PREFIX = "wh" "sec_"


def path(workspace: str, *rest: str) -> str:
    return "/".join([f"/v1/workspaces/{workspace}/webhooks", *rest])


def test_create_answers_201_with_the_secret_once_and_never_again(
    api: Api, alice: str, workspace: str
) -> None:
    created = api.call(
        "POST", path(workspace), alice,
        body={"url": URL, "events": ["key.created"], "description": "alerts"},
    )
    listed = api.call("GET", path(workspace), alice)
    got = api.call("GET", path(workspace, created.json["id"]), alice)

    assert created.status == 201
    assert created.json["secret"].startswith(SECRET_PREFIX)
    assert created.headers["Location"] == path(workspace, created.json["id"])
    assert created.headers["Cache-Control"] == "no-store"
    assert created.json["events"] == ["key.created"]
    assert created.json["enabled"] is True
    assert created.json["description"] == "alerts"
    assert listed.status == 200 and got.status == 200
    assert [w["id"] for w in listed.json["webhooks"]] == [created.json["id"]]
    assert "secret" not in listed.json["webhooks"][0]
    assert "secret" not in got.json


def test_a_member_gets_403_owner_required_and_a_stranger_404(
    api: Api, alice: str, bob: str, workspace: str
) -> None:
    carol = api.token("usr_carol")
    api.add_member(alice, workspace, "usr_bob")

    member = api.call("POST", path(workspace), bob, body={"url": URL, "events": ["*"]})
    stranger = api.call("GET", path(workspace), carol)

    assert (member.status, member.code) == (403, "owner_required")
    assert (stranger.status, stranger.code) == (404, "not_found")


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/x",
        "https://127.0.0.1/x",
        "https://127.1/x",
        "https://2130706433/x",
        "https://0x7f000001/x",
        "https://0177.0.0.1/x",
        "https://10.0.0.1/x",
        "https://169.254.169.254/latest",
        "https://[::1]/x",
        "https://[::ffff:7f00:1]/x",
        "https://[64:ff9b::a9fe:a9fe]/x",
        "https://localhost/x",
        "https://intranet/x",
        "https://user:pw@hooks.example.com/x",
        "https://hooks.example.com/x#part",
        "ftp://hooks.example.com/x",
        "not a url",
    ],
)
def test_a_url_that_is_not_https_to_a_public_host_name_is_400_invalid_webhook(
    api: Api, alice: str, workspace: str, url: str
) -> None:
    answer = api.call("POST", path(workspace), alice, body={"url": url, "events": ["*"]})

    assert (answer.status, answer.code) == (400, "invalid_webhook")


@pytest.mark.parametrize(
    "events", [[], ["key.nope"], ["*", "key.created"], ["key.created", "key.created"], "*"]
)
def test_events_that_are_not_types_or_the_wildcard_are_400_invalid_webhook(
    api: Api, alice: str, workspace: str, events: object
) -> None:
    answer = api.call("POST", path(workspace), alice, body={"url": URL, "events": events})

    assert (answer.status, answer.code) == (400, "invalid_webhook")


def test_the_eleventh_webhook_is_409_limit_reached_until_one_is_deleted(
    api: Api, alice: str, workspace: str
) -> None:
    made = [subscribe(api, alice, workspace) for _ in range(10)]

    eleventh = api.call("POST", path(workspace), alice, body={"url": URL, "events": ["*"]})
    deleted = api.call("DELETE", path(workspace, made[0]["id"]), alice)
    again = api.call("POST", path(workspace), alice, body={"url": URL, "events": ["*"]})

    assert (eleventh.status, eleventh.code) == (409, "limit_reached")
    assert deleted.status == 204
    assert again.status == 201


def test_concurrent_creations_never_pass_the_limit(
    services: Services, workspace: str, clock: FrozenClock, one_request_at_a_time: None
) -> None:
    from chalicelib import ids

    store = services.webhooks
    created: list[bool] = []

    def create() -> None:
        webhook = Webhook(
            id=ids.new_webhook_id(clock.now()), workspace_id=workspace, url=URL,
            events=("*",), enabled=True, description=None, sealed_secret=b"x",
            created_at=clock.now(), created_by="usr_alice",
        )
        try:
            store.create(webhook)
            created.append(True)
        except LimitReached:
            created.append(False)

    threads = [threading.Thread(target=create) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert created.count(True) == 10
    assert len(store.list(workspace)) == 10


def test_patch_changes_url_events_and_enabled(api: Api, alice: str, workspace: str) -> None:
    made = subscribe(api, alice, workspace)

    changed = api.call(
        "PATCH", path(workspace, made["id"]), alice,
        body={"url": "https://other.example.org/in", "events": ["key.revoked"], "enabled": False},
    )
    bad = api.call(
        "PATCH", path(workspace, made["id"]), alice, body={"url": "https://10.0.0.1/in"}
    )

    assert changed.status == 200
    assert changed.json["url"] == "https://other.example.org/in"
    assert changed.json["events"] == ["key.revoked"]
    assert changed.json["enabled"] is False
    assert (bad.status, bad.code) == (400, "invalid_webhook")


def test_rotate_secret_answers_a_new_secret_and_the_old_one_signs_for_24_hours(
    api: Api, alice: str, workspace: str, clock: FrozenClock
) -> None:
    made = subscribe(api, alice, workspace)

    rotated = api.call("POST", path(workspace, made["id"], "rotate-secret"), alice)
    clock.advance(hours=23)
    during = api.call("GET", path(workspace, made["id"]), alice)
    clock.advance(hours=1)
    after = api.call("GET", path(workspace, made["id"]), alice)

    assert rotated.status == 200
    assert rotated.json["secret"].startswith(SECRET_PREFIX)
    assert rotated.json["secret"] != made["secret"]
    assert during.json["previousSecretExpiresAt"] is not None
    assert after.json["previousSecretExpiresAt"] is None


def test_delete_is_204_then_the_webhook_is_404(api: Api, alice: str, workspace: str) -> None:
    made = subscribe(api, alice, workspace)

    deleted = api.call("DELETE", path(workspace, made["id"]), alice)
    again = api.call("DELETE", path(workspace, made["id"]), alice)
    got = api.call("GET", path(workspace, made["id"]), alice)

    assert deleted.status == 204
    assert (again.status, again.code) == (404, "not_found")
    assert (got.status, got.code) == (404, "not_found")


def test_each_change_is_an_audit_event_of_the_workspace(
    api: Api, alice: str, workspace: str
) -> None:
    made = subscribe(api, alice, workspace)
    api.call("PATCH", path(workspace, made["id"]), alice, body={"enabled": False})
    api.call("POST", path(workspace, made["id"], "rotate-secret"), alice)
    api.call("DELETE", path(workspace, made["id"]), alice)

    listed = api.call("GET", f"/v1/auth/events?workspace_id={workspace}", alice)

    types = [e["type"] for e in listed.json["events"] if e["type"].startswith("webhook.")]
    assert types == [
        "webhook.deleted", "webhook.secret_rotated", "webhook.updated", "webhook.created"
    ]
    assert all("secret" not in str(e["data"]).lower() for e in listed.json["events"])
