"""The local stack as other people's clients meet it: started once, on free ports, with
settings exported in its environment as a developer would before `make run`.

The clients here send what the memory service's test kit (its Go, Python, R, TypeScript and
C# clients) and the MCP conformance tool send: our own Python SDK behind a transport that
turns every JSON body into camelCase, and raw HTTP in the shapes Go renders (empty values
for "none", an `error` member read from every refusal).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic.alias_generators import to_camel

from local.running import running_stack

# Exported before the stack starts: each differs from the development stage's config
# (.chalice/config.json says 20 and 100), so the stack's answers show which one won.
EXPORTED = {"MCP_REGISTRATION_LIMIT": "3", "WORKSPACE_LIMIT": "2"}


class Stack:
    def __init__(self, info: dict[str, Any]):
        self.info = info
        self.endpoint: str = info["endpoint"]
        self.token: str = info["token"]
        self.workspace_id: str = info["workspaceId"]
        self.http = httpx.Client(base_url=self.endpoint, timeout=30)

    def id_token(self, subject: str) -> str:
        """An ID token of the stack's development identity provider for `subject`."""
        answer = httpx.post(
            self.info["idpEndpoint"] + "/token",
            json={"sub": subject, "email": f"{subject}@example.test"},
            timeout=10,
        )
        answer.raise_for_status()
        return str(answer.json()["id_token"])

    def signed_in(self, subject: str) -> dict[str, Any]:
        """A token pair for `subject`, signed in the way our own SDK does it."""
        answer = self.http.post("/v1/auth/exchange", json={"id_token": self.id_token(subject)})
        assert answer.status_code == 200, answer.text
        return dict(answer.json())


@pytest.fixture(scope="session")
def stack() -> Iterator[Stack]:
    with running_stack(environment=EXPORTED) as info:
        running = Stack(info)
        yield running
        running.http.close()


def camel_cased(value: Any) -> Any:
    """What the test kit's REST transports send: every object key in camelCase."""
    if isinstance(value, dict):
        return {to_camel(k): camel_cased(v) for k, v in value.items()}
    if isinstance(value, list):
        return [camel_cased(v) for v in value]
    return value


class CamelCaseTransport(httpx.AsyncBaseTransport):
    """An httpx transport that rewrites each JSON request body into camelCase, as the test
    kit's Go, R, TypeScript and C# clients do, before it goes out."""

    def __init__(self) -> None:
        self._inner = httpx.AsyncHTTPTransport()
        self.sent: list[dict[str, Any]] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.headers.get("content-type", "").startswith("application/json"):
            body = camel_cased(json.loads(await request.aread()))
            self.sent.append(body)
            headers = {k: v for k, v in request.headers.items() if k.lower() != "content-length"}
            request = httpx.Request(
                request.method, request.url, headers=headers, content=json.dumps(body).encode()
            )
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()
