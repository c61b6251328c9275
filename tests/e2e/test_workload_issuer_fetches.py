"""A failing workload issuer over real HTTP: a trust policy names an issuer on loopback (local
mode) whose key set answers 500, or never answers; exchanges against it reach it at most once
per 30 seconds (discovery and key set once each), every one answered 503 meanwhile. Without
that bound our service would fetch a host of the policy owner's choice on every
unauthenticated exchange."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
import pytest

from tests.e2e.conftest import Stack
from tests.e2e.test_workload_identity import exchange
from tests.oidc_issuer import signing_key

AUDIENCE = "memory-service"


class FailingIssuer:
    """An OpenID issuer on loopback: a good discovery document, a key set that answers 500
    (`hang` False) or holds the request until the test ends (`hang` True)."""

    def __init__(self, hang: bool):
        self.hang = hang
        self.requests: Counter[str] = Counter()
        self.release = threading.Event()
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                issuer.requests[self.path] += 1
                if self.path == "/.well-known/openid-configuration":
                    body = json.dumps({"issuer": issuer.url, "jwks_uri": issuer.url + "/jwks"})
                    self._send(200, body.encode())
                elif issuer.hang:
                    issuer.release.wait(30)  # past the service's 3-second budget
                    self._send(200, b'{"keys": []}')
                else:
                    self._send(500, b'{"error": "down"}')

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def token(self) -> str:
        now = int(time.time())
        claims = {"iss": self.url, "aud": AUDIENCE, "sub": "repo:acme/agents:ref:refs/heads/main",
                  "iat": now, "exp": now + 600}
        return jwt.encode(claims, signing_key(), algorithm="RS256", headers={"kid": "k1"})

    def close(self) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(params=[False, True], ids=["jwks answers 500", "jwks hangs"])
def failing(request: pytest.FixtureRequest, stack: Stack) -> Iterator[FailingIssuer]:
    issuer = FailingIssuer(hang=request.param)
    answer = stack.call(
        "POST",
        f"/v1/workspaces/{stack.workspace_id}/trust-policies",
        stack.token,
        body={"name": "failing issuer", "issuer": issuer.url, "audience": AUDIENCE,
              "subject": "repo:acme/agents:ref:refs/heads/*", "scopes": ["memory"]},
    )
    assert answer.status_code == 201, answer.text
    try:
        yield issuer
    finally:
        stack.call(
            "DELETE",
            f"/v1/workspaces/{stack.workspace_id}/trust-policies/{answer.json()['id']}",
            stack.token,
        )
        issuer.close()


def test_ten_exchanges_against_a_failing_issuer_fetch_it_once_and_answer_503(
    stack: Stack, failing: FailingIssuer
) -> None:
    answers = [exchange(stack, failing.token()) for _ in range(10)]

    assert [(a.status_code, a.json()["error"]) for a in answers] == [
        (503, "temporarily_unavailable")
    ] * 10
    assert failing.requests == {"/.well-known/openid-configuration": 1, "/jwks": 1}
