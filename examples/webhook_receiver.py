"""Receive a workspace's audit events as signed webhooks, and verify each (Python SDK).

    . .local/connection.env
    PYTHONPATH=sdks/python/src .venv/bin/python examples/webhook_receiver.py

Serves http://127.0.0.1:<port>/webhooks, subscribes it to the workspace's `key.*` events
(locally a loopback http URL is allowed; a deployed stage takes https to a public host name
only), and prints each delivery once its signature verifies: its type and event id, never
a key. `--once` creates (and revokes) a key itself, waits for the delivery of that event,
deletes the subscription and exits. Reads MEMORY_ENDPOINT, MEMORY_WORKSPACE_ID and
MEMORY_LOCAL_TOKEN (the local development user: the workspace's owner), or MEMORY_TOKEN.
"""

import json
import os
import queue
import sys
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from memory_sdk import WebhookVerificationError, verify_webhook

ENDPOINT = os.environ["MEMORY_ENDPOINT"]
WORKSPACE = os.environ["MEMORY_WORKSPACE_ID"]
TOKEN = os.environ.get("MEMORY_TOKEN") or os.environ["MEMORY_LOCAL_TOKEN"]
secrets: list[str] = []  # the current secret (and, during a rotation, the previous one)
verified: "queue.Queue[dict]" = queue.Queue()


def call(method: str, path: str, body: dict | None = None) -> dict:
    request = urllib.request.Request(  # noqa: S310 - MEMORY_ENDPOINT: our own service
        ENDPOINT + path,
        method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
        return json.loads(answer.read() or b"null")


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        try:
            event = verify_webhook(body, dict(self.headers), secrets)
        except WebhookVerificationError as refused:
            self.send_response(400)  # not ours, altered, or replayed: dropped
            self.end_headers()
            print(f"refused a delivery: {refused}", flush=True)
            return
        self.send_response(204)  # answer fast; do the work after
        self.end_headers()
        # Deliveries can come twice: webhook-id (the event id) is what to dedupe on.
        print(f"verified {event['type']} {self.headers['webhook-id']}", flush=True)
        verified.put(event)

    def log_message(self, *_: object) -> None:
        pass


def main() -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/webhooks"
    hooks = f"/v1/workspaces/{WORKSPACE}/webhooks"
    subscription = call("POST", hooks, {"url": url, "events": ["key.created", "key.revoked"]})
    secrets.append(subscription["secret"])  # shown once: keep it in a secret store
    print(f"subscribed {subscription['id']} at {url}", flush=True)
    try:
        if "--once" not in sys.argv:
            threading.Event().wait()
        key = call("POST", "/v1/auth/api-keys",
                   {"label": "webhook example", "category": "workspace", "workspaceId": WORKSPACE})
        call("DELETE", f"/v1/auth/api-keys/{key['id']}")
        event = verified.get(timeout=60)
        print(f"the key in it: {event['data']['keyId'] == key['id']}", flush=True)
    finally:
        call("DELETE", f"{hooks}/{subscription['id']}")
        server.shutdown()


main()
