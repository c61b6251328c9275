"""Webhooks over real HTTP: the local stack's queue worker delivers to a receiver on
loopback, retries a 500, and the signature verifies (checked here as the Standard Webhooks
specification says; the SDK's verifier does it in examples/webhook_receiver.py)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from tests.e2e.conftest import Stack
from tests.e2e.waiting import DEADLINE, says


class Receiver:
    """Answers 500 to the first POST of each event (by its `webhook-id`), 200 to its repeats;
    keeps what it was sent, and signals each POST to whoever waits for one."""

    def __init__(self) -> None:
        self.received: list[tuple[dict[str, str], bytes]] = []
        self._arrived = threading.Condition(threading.RLock())
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                headers = {k.lower(): v for k, v in self.headers.items()}
                with outer._arrived:
                    seen = any(
                        h["webhook-id"] == headers["webhook-id"] for h, _ in outer.received
                    )
                    outer.received.append((headers, body))
                    outer._arrived.notify_all()
                self.send_response(200 if seen else 500)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def posts_of(self, key_id: str) -> list[tuple[dict[str, str], bytes]]:
        """The POSTs of events about the key `key_id` (the workspace's other events, queued
        before the subscription existed or from other tests, may arrive too)."""
        with self._arrived:
            return [
                (headers, body) for headers, body in self.received
                if json.loads(body)["data"].get("keyId") == key_id
            ]

    def wait_for(self, key_id: str, count: int) -> list[tuple[dict[str, str], bytes]]:
        """The first `count` POSTs about `key_id`, once they have arrived."""
        with self._arrived:
            arrived = self._arrived.wait_for(
                lambda: len(self.posts_of(key_id)) >= count, timeout=DEADLINE
            )
        assert arrived, f"{count} deliveries about {key_id} not received in {DEADLINE:.0f} s"
        return self.posts_of(key_id)[:count]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver()
    thread = threading.Thread(target=receiver.server.serve_forever, daemon=True)
    thread.start()
    yield receiver
    receiver.server.shutdown()


def verify_webhook(body: bytes, headers: dict[str, str], secret: str) -> Any:
    key = base64.b64decode(secret.removeprefix("wh" "sec_"))
    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    expected = "v1," + base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    assert any(hmac.compare_digest(s, expected) for s in headers["webhook-signature"].split())
    assert abs(time.time() - int(headers["webhook-timestamp"])) <= 300
    return json.loads(body)


def test_a_delivery_answered_500_is_retried_once_then_delivered_and_verifies(
    stack: Stack, receiver: Receiver
) -> None:
    assert stack.log is not None
    hooks = f"/v1/workspaces/{stack.workspace_id}/webhooks"
    made = stack.call(
        "POST", hooks, stack.token, body={"url": receiver.url, "events": ["key.created"]}
    ).json()
    mark = stack.log.mark()
    key = stack.call(
        "POST", "/v1/auth/api-keys", stack.token,
        body={"label": "hooked", "category": "workspace", "workspaceId": stack.workspace_id},
    ).json()

    (first_headers, first_body), (headers, body) = receiver.wait_for(key["id"], 2)
    event_id = headers["webhook-id"]
    stack.log.wait_for(
        says("webhook attempt recorded", event_id=event_id, state="delivered"), since=mark
    )
    listed = stack.call("GET", f"{hooks}/{made['id']}/deliveries", stack.token).json()
    stack.call("DELETE", f"{hooks}/{made['id']}", stack.token)

    assert len(receiver.posts_of(key["id"])) == 2  # one retry, one delivery
    assert first_headers["webhook-id"] == event_id and body == first_body
    event = verify_webhook(body, headers, made["secret"])
    assert event["type"] == "key.created"
    assert event["data"]["keyId"] == key["id"]
    assert event_id == event["data"]["id"]
    (delivery,) = [d for d in listed["deliveries"] if d["eventId"] == event_id]
    assert (delivery["state"], delivery["attempts"], delivery["lastStatusCode"]) == (
        "delivered", 2, 200
    )


def test_a_reported_live_key_is_revoked_and_the_answer_says_nothing(stack: Stack) -> None:
    assert stack.log is not None
    key = stack.call(
        "POST", "/v1/auth/api-keys", stack.token,
        body={"label": "leaked", "category": "workspace", "workspaceId": stack.workspace_id},
    ).json()

    live = stack.call("POST", "/v1/auth/credentials/revoke", body={"credentials": [key["key"]]})
    junk = stack.call("POST", "/v1/auth/credentials/revoke", body={"credentials": ["junk"]})
    stack.log.wait_for(says("leaked api key revoked", key_id=key["id"]))
    status = stack.call("GET", f"/v1/auth/api-keys/{key['id']}", stack.token).json()["status"]

    assert (live.status_code, live.content) == (junk.status_code, junk.content)
    assert (live.status_code, live.json()) == (202, {"received": 1})
    assert status == "revoked"
