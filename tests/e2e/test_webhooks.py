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

DEADLINE = 60.0  # seconds a test waits for what it polls for (not a timed assertion)


class Receiver:
    """Answers 500 to the first delivery, 200 to the rest; keeps what it was sent."""

    def __init__(self, statuses: list[int]):
        self.statuses = statuses
        self.received: list[tuple[dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.received.append(({k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(outer.statuses.pop(0) if outer.statuses else 200)
                self.end_headers()

            def log_message(self, *_: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def wait_for(self, count: int) -> None:
        ends = time.monotonic() + DEADLINE
        while len(self.received) < count and time.monotonic() < ends:
            time.sleep(0.1)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    receiver = Receiver([500])
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


def poll(read: Any, done: Any) -> Any:
    ends = time.monotonic() + DEADLINE
    value = read()
    while not done(value) and time.monotonic() < ends:
        time.sleep(0.2)
        value = read()
    return value


def test_a_delivery_answered_500_is_retried_once_then_delivered_and_verifies(
    stack: Stack, receiver: Receiver
) -> None:
    hooks = f"/v1/workspaces/{stack.workspace_id}/webhooks"
    made = stack.call(
        "POST", hooks, stack.token, body={"url": receiver.url, "events": ["key.created"]}
    ).json()
    key = stack.call(
        "POST", "/v1/auth/api-keys", stack.token,
        body={"label": "hooked", "category": "workspace", "workspaceId": stack.workspace_id},
    ).json()

    receiver.wait_for(2)
    deliveries_path = f"{hooks}/{made['id']}/deliveries"
    listed = poll(
        lambda: stack.call("GET", deliveries_path, stack.token).json()["deliveries"],
        lambda found: found and found[0]["state"] == "delivered",
    )
    stack.call("DELETE", f"{hooks}/{made['id']}", stack.token)

    (first_headers, first_body), (headers, body) = receiver.received[:2]
    assert len(receiver.received) == 2  # one retry, one delivery
    assert headers["webhook-id"] == first_headers["webhook-id"] and body == first_body
    event = verify_webhook(body, headers, made["secret"])
    assert event["type"] == "key.created"
    assert event["data"]["keyId"] == key["id"]
    assert headers["webhook-id"] == event["data"]["id"]
    (delivery,) = listed
    assert (delivery["state"], delivery["attempts"], delivery["lastStatusCode"]) == (
        "delivered", 2, 200
    )


def test_a_reported_live_key_is_revoked_and_the_answer_says_nothing(stack: Stack) -> None:
    key = stack.call(
        "POST", "/v1/auth/api-keys", stack.token,
        body={"label": "leaked", "category": "workspace", "workspaceId": stack.workspace_id},
    ).json()

    live = stack.call("POST", "/v1/auth/credentials/revoke", body={"credentials": [key["key"]]})
    junk = stack.call("POST", "/v1/auth/credentials/revoke", body={"credentials": ["junk"]})
    status = poll(
        lambda: stack.call("GET", f"/v1/auth/api-keys/{key['id']}", stack.token).json()["status"],
        lambda found: found == "revoked",
    )

    assert (live.status_code, live.content) == (junk.status_code, junk.content)
    assert (live.status_code, live.json()) == (202, {"received": 1})
    assert status == "revoked"
