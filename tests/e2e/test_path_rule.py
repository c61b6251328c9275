"""The data-plane path rule over real HTTP: a token holding only `memory`, sent on paths that
a normalising backend would serve outside `memory`, is refused `invalid_path` by the local
stand-in of the memory service's gateway (the authorizer's own decision on the path as sent,
percent-encoding and all), where it was allowed before."""

from __future__ import annotations

import http.client
import json
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import Stack
from tests.e2e.test_delegation import delegate, workspace_key


def sent_as_is(stack: Stack, path: str, token: str) -> tuple[int, Any]:
    """GET with the request target exactly as written (httpx would remove dot segments)."""
    gateway = urlsplit(stack.info["mcpResource"])
    connection = http.client.HTTPConnection(gateway.hostname or "", gateway.port, timeout=10)
    try:
        connection.request("GET", path, headers={"Authorization": f"Bearer {token}"})
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read() or b"null")
    finally:
        connection.close()


@pytest.fixture(scope="module")
def memory_only(stack: Stack) -> str:
    minted = delegate(stack, workspace_key(stack)["key"], scope="memory")
    assert minted.status_code == 200, minted.text
    return str(minted.json()["access_token"])


@pytest.mark.parametrize(
    "path",
    [
        "/v1/memory/../entities/x",
        "/v1/memory%2F..%2Fentities/x",
        "/v1/memory/../workspaces/{ws}/members",
        "/v1/memory/%2e%2e/entities/x",
        "/v1/memory%5C..%5Centities/x",
    ],
)
def test_a_memory_only_token_on_a_path_leaving_memory_is_403_invalid_path(
    stack: Stack, memory_only: str, path: str
) -> None:
    status, body = sent_as_is(stack, path.format(ws=stack.workspace_id), memory_only)

    assert (status, body["code"]) == (403, "invalid_path")


def test_the_same_token_on_a_plain_memory_path_is_allowed(stack: Stack, memory_only: str) -> None:
    status, body = sent_as_is(stack, "/v1/memory/items", memory_only)

    assert status == 200
    assert body["scopes"] == "memory"
