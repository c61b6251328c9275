"""The shapes the memory service's test kit clients send, against the local stack.

Their REST transports turn every body into camelCase (`refreshToken`), Go renders "none" as
an empty value (`?workspace_id=`, `"workspaceId": ""`, an empty header), a JSON token request
may carry `grant_type`, and they read a refusal's `error` member. docs/guides/sdks.md, "Other
clients", says what each must send and what the answers mean.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest
from memory_sdk import MemoryClient, RateLimitError

from tests.interop.conftest import CamelCaseTransport, Stack

KEYS = "/v1/auth/api-keys"
TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"


def run[T](step: Callable[[], Awaitable[T]]) -> T:
    return anyio.run(step)


def bearer(token: str, **headers: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", **headers}


# -- our own SDK, its bodies in camelCase as the test kit's transports send them ------------


def test_a_camel_casing_client_signs_in_refreshes_and_manages_keys(stack: Stack) -> None:
    transport = CamelCaseTransport()

    async def session() -> tuple[list[str], str]:
        async with MemoryClient(
            endpoint=stack.endpoint, backend="svc", http_transport=transport
        ) as client:
            await client.auth.exchange(stack.id_token("interop-camel"))
            await client.auth.refresh_access_token()
            created = await client.auth.create_api_key("from a camelCase client")
            listed = await client.auth.list_api_keys(all_workspaces=True)
            await client.auth.revoke_api_key(created.id)
            await client.auth.revoke()
            return [k.id for k in listed], created.id

    listed, created = run(session)

    assert created in listed
    sent_names = {name for body in transport.sent for name in body}
    assert {"idToken", "refreshToken"} <= sent_names  # what went out: camelCase only
    assert not {"id_token", "refresh_token"} & sent_names


def test_a_camel_casing_client_delegates_to_a_workspace(stack: Stack) -> None:
    transport = CamelCaseTransport()

    async def delegate() -> str:
        async with MemoryClient(
            endpoint=stack.endpoint, access_token=stack.token, http_transport=transport
        ) as client:
            token = await client.auth.delegate(workspace_id=stack.workspace_id, expires_in=120)
            return token.access_token.get_secret_value()

    delegated = run(delegate)

    whoami = stack.http.get("/v1/auth/whoami", headers=bearer(delegated))
    assert whoami.status_code == 200
    assert whoami.json()["workspaceId"] == stack.workspace_id
    assert {"subjectToken", "subjectTokenType", "workspaceId"} <= set(transport.sent[-1])


def test_our_sdk_with_an_empty_workspace_id_creates_an_admin_key(stack: Stack) -> None:
    async def create() -> Any:
        async with MemoryClient(endpoint=stack.endpoint, access_token=stack.token) as client:
            return await client.auth.create_api_key("empty workspace", workspace_id="")

    created = run(create)

    assert (created.category, created.workspace_id) == ("admin", None)


def test_a_rotated_keys_successor_answers_what_is_left_of_the_day_then_429(
    stack: Stack,
) -> None:
    async def rotate_and_use() -> list[str]:
        async with MemoryClient(endpoint=stack.endpoint, access_token=stack.token) as owner:
            key = await owner.auth.create_api_key("quota of 3", requests_per_day=3)
            outcomes = []
            for plaintext in (key.key, key.key):
                assert plaintext is not None
                async with MemoryClient(endpoint=stack.endpoint, api_key=plaintext) as user:
                    await user.auth.whoami()
            successor = await owner.auth.rotate_api_key(key.id)
            assert successor.key is not None
            async with MemoryClient(endpoint=stack.endpoint, api_key=successor.key) as user:
                for _ in range(2):
                    try:
                        await user.auth.whoami()
                        outcomes.append("ok")
                    except RateLimitError as refused:
                        outcomes.append(str(refused.code))
            return outcomes

    assert run(rotate_and_use) == ["ok", "quota_exceeded"]


# -- raw HTTP, as Go renders "none" -------------------------------------------------------


def test_empty_workspace_values_mean_no_workspace(stack: Stack) -> None:
    created = stack.http.post(
        KEYS, headers=bearer(stack.token), json={"label": "go client", "workspaceId": ""}
    )
    assert created.status_code == 201, created.text
    key_id = created.json()["id"]

    listed = stack.http.get(f"{KEYS}?workspace_id=", headers=bearer(stack.token))
    revealed = stack.http.get(f"{KEYS}/{key_id}/reveal?workspace_id=", headers=bearer(stack.token))
    whoami = stack.http.get(
        "/v1/auth/whoami", headers=bearer(stack.token, **{"X-Workspace-Id": ""})
    )

    assert created.json()["category"] == "admin"
    assert listed.status_code == 200 and key_id in {k["id"] for k in listed.json()["keys"]}
    assert revealed.status_code == 200
    assert whoami.status_code == 200 and whoami.json()["workspaceId"] is None


# -- grant_type in a JSON token request ---------------------------------------------------


def test_a_json_token_request_may_name_its_grant(stack: Stack) -> None:
    exchanged = stack.http.post(
        "/v1/auth/exchange",
        json={"grantType": TOKEN_EXCHANGE, "idToken": stack.id_token("interop-grant")},
    )
    assert exchanged.status_code == 200, exchanged.text
    refreshed = stack.http.post(
        "/v1/auth/refresh",
        json={"grant_type": "refresh_token", "refreshToken": exchanged.json()["refresh_token"]},
    )
    wrong = stack.http.post(
        "/v1/auth/exchange",
        json={"grant_type": "refresh_token", "idToken": stack.id_token("interop-grant")},
    )

    assert refreshed.status_code == 200, refreshed.text
    assert (wrong.status_code, wrong.json()["error"]) == (400, "unsupported_grant_type")


# -- a client that reads `error` ----------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path", "credential", "headers", "status", "error"),
    [
        ("GET", "/v1/auth/whoami", None, {}, 401, "missing_credentials"),
        ("GET", "/v1/auth/whoami", "not-a-key", {}, 401, "invalid_credentials"),
        ("GET", f"{KEYS}/key_01NOSUCHKEY00000000000000", "token", {}, 404, "not_found"),
        ("GET", f"{KEYS}?workspace_id=team-1", "token", {}, 400, "invalid_workspace_id"),
        ("GET", "/v1/no/such/route", None, {}, 404, "not_found"),
        ("POST", KEYS, "token", {"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
    ],
)
def test_every_refusal_carries_error_for_clients_that_read_it(
    stack: Stack,
    method: str,
    path: str,
    credential: str | None,
    headers: dict[str, str],
    status: int,
    error: str,
) -> None:
    sent = dict(headers)
    if credential is not None:
        sent["Authorization"] = f"Bearer {stack.token if credential == 'token' else credential}"

    answer = stack.http.request(method, path, headers=sent, content=b"x" if headers else None)

    assert answer.status_code == status, answer.text
    assert answer.json()["error"] == error


def test_a_bad_workspace_id_in_the_query_is_named_as_the_query_parameter(stack: Stack) -> None:
    answer = stack.http.get(f"{KEYS}?workspace_id=team-1", headers=bearer(stack.token))

    assert answer.json()["error"] == "invalid_workspace_id"
    assert "workspace_id query parameter" in answer.json()["detail"]


# -- the MCP token endpoint: one error shape ----------------------------------------------


@pytest.mark.parametrize("path", ["/v1/oauth/token", "/v1/oauth/revoke"])
def test_a_json_body_at_the_mcp_token_endpoints_is_an_oauth_error(
    stack: Stack, path: str
) -> None:
    answer = stack.http.post(path, json={"grant_type": "refresh_token", "refresh_token": "x"})

    assert answer.status_code == 400
    assert answer.headers["content-type"] == "application/json"
    assert answer.json()["error"] == "invalid_request"
    assert "application/x-www-form-urlencoded" in answer.json()["error_description"]


# -- the settings a developer exported win over the development stage's -------------------


def test_an_exported_workspace_limit_is_the_one_in_force(stack: Stack) -> None:
    token = stack.signed_in("interop-limits")["access_token"]

    answers = [
        stack.http.post("/v1/workspaces", headers=bearer(token), json={"name": f"ws {n}"})
        for n in range(3)
    ]

    assert [a.status_code for a in answers] == [201, 201, 409]
    assert answers[2].json()["error"] == "limit_reached"
    assert "WORKSPACE_LIMIT" in answers[2].json()["detail"]


def test_an_exported_registration_limit_counts_only_registrations_that_succeed(
    stack: Stack,
) -> None:
    callback = "http://127.0.0.1:47999/callback"
    refused = [
        stack.http.post("/v1/oauth/register", json={"redirect_uris": ["http://evil.test/cb"]}),
        stack.http.post("/v1/oauth/register", json={"redirect_uris": []}),
    ]
    admitted = [
        stack.http.post(
            "/v1/oauth/register", json={"redirect_uris": [callback], "client_name": f"c{n}"}
        )
        for n in range(4)
    ]

    assert [a.status_code for a in refused] == [400, 400]
    assert [a.status_code for a in admitted] == [201, 201, 201, 429]


def test_a_connection_reading_error_sees_httpx_status_too(stack: Stack) -> None:
    """The TypeScript and Go clients raise on the status, then read `error`: both agree."""
    answer = stack.http.get("/v1/auth/whoami")

    with pytest.raises(httpx.HTTPStatusError):
        answer.raise_for_status()
    assert answer.json()["error"] == answer.json()["code"]
